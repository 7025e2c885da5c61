package sim

import (
	"testing"

	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// scriptTurn is one turn of a scripted session.
type scriptTurn struct {
	prompt, output int
	prefix         []kv.Segment
	out            kv.Segment // the answer's content, as the next turn repeats it
	thinkNs        int64
}

// scriptSessions is a SessionSource over fixed sessions starting at the
// given times; it counts the NextTurn calls per session.
type scriptSessions struct {
	startsNs []int64
	turns    [][]scriptTurn
	next     []int // per session: the next turn to hand out
	started  int
	calls    []int
	classes  []uint8 // per session, when the case has classes
}

func newScript(startsNs []int64, turns [][]scriptTurn) *scriptSessions {
	return &scriptSessions{startsNs: startsNs, turns: turns, next: make([]int, len(turns)), calls: make([]int, len(turns))}
}

func (s *scriptSessions) fill(r *Request, i, t int) {
	tt := s.turns[i][t]
	*r = Request{PromptTokens: tt.prompt, OutputTokens: tt.output, Prefix: tt.prefix, Output: tt.out, Session: int32(i), Turn: uint16(t + 1)}
	if s.classes != nil {
		r.Class = s.classes[i]
	}
}

func (s *scriptSessions) Next(r *Request) (bool, error) {
	if s.started == len(s.turns) {
		return false, nil
	}
	i := s.started
	s.fill(r, i, 0)
	r.ArrivalNs = s.startsNs[i]
	s.next[i], s.started = 1, s.started+1
	return true, nil
}

func (s *scriptSessions) NextTurn(session int32, r *Request) (int64, bool, error) {
	i := int(session)
	s.calls[i]++
	if s.next[i] == len(s.turns[i]) {
		return 0, false, nil
	}
	s.fill(r, i, s.next[i])
	s.next[i]++
	return s.turns[i][s.next[i]-1].thinkNs, true, nil
}

// chatSessions builds n sessions of k turns, each turn's prefix the previous
// turn's prompt and output then 32 new tokens, all shared content; each
// turn names its output with the segment the next turn repeats.
func chatSessions(n, k int, thinkNs int64) *scriptSessions {
	starts := make([]int64, n)
	turns := make([][]scriptTurn, n)
	for i := range n {
		starts[i] = int64(i) * 3000
		var chain []kv.Segment
		for t := range k {
			if t > 0 {
				chain = append(chain, turns[i][t-1].out)
			}
			chain = append(chain, kv.Segment{ID: uint64(i)<<20 | uint64(t+1)<<1, Tokens: 32})
			p := 0
			for _, s := range chain {
				p += s.Tokens
			}
			out := kv.Segment{ID: uint64(i)<<20 | uint64(t+1)<<1 | 1, Tokens: 20}
			turns[i] = append(turns[i], scriptTurn{prompt: p, output: 20, prefix: chain[:len(chain):len(chain)], out: out, thinkNs: thinkNs})
		}
	}
	return newScript(starts, turns)
}

// TestSessionThinkTime: each turn after the first arrives exactly its think
// time after the previous turn of its session ended; every turn ends once,
// NextTurn is asked once per ended turn, and records carry session and turn.
func TestSessionThinkTime(t *testing.T) {
	const think = 7_777
	src := chatSessions(4, 3, think)
	cfg := colocatedConfig(t, 4096, nil)
	cfg.Source = src
	for i := range cfg.Instances {
		cfg.Instances[i].FinalEmitNs = 500
	}
	res := mustRun(t, cfg)
	checkConservation(t, res.Records, 12)
	last := map[int32]results.Record{}
	for _, r := range res.Records {
		if r.Turn == 0 {
			t.Fatalf("request %d has no turn", r.ID)
		}
		prev, ok := last[r.Session]
		switch {
		case r.Turn == 1 && r.ArrivalNs != int64(r.Session)*3000:
			t.Errorf("session %d started at %d ns, want %d", r.Session, r.ArrivalNs, r.Session*3000)
		case r.Turn > 1 && (!ok || prev.Turn != r.Turn-1):
			t.Fatalf("session %d turn %d arrived before turn %d", r.Session, r.Turn, r.Turn-1)
		case r.Turn > 1 && r.ArrivalNs != prev.FinishNs+think:
			t.Errorf("session %d turn %d arrived at %d ns, want %d + %d", r.Session, r.Turn, r.ArrivalNs, prev.FinishNs, think)
		}
		last[r.Session] = r
	}
	for i, n := range src.calls {
		if n != 3 {
			t.Errorf("session %d: NextTurn asked %d times, want 3 (once per ended turn)", i, n)
		}
	}
}

// TestSessionPrefixHit: on one instance with the prefix cache, each turn
// finds every full block the previous one computed, prompt and output: turn
// 1 computed its 32-token prompt and 19 of its 20 output tokens (the last
// has no KV), 51 tokens, 3 blocks of 16 = 48; turn 2, 84 + 19 = 103 tokens,
// 6 blocks = 96 (of turn 3's 136-token prompt). Without the output's
// identity they would find the prompt blocks only: 32 and 80.
func TestSessionPrefixHit(t *testing.T) {
	cfg := colocatedConfig(t, 4096, nil)
	cfg.Instances[0].Engine = engineCfg(t, 100, 4096, 8, true)
	cfg.Source = chatSessions(1, 3, 0)
	res := mustRun(t, cfg)
	checkConservation(t, res.Records, 3)
	for i, want := range []int32{0, 48, 96} {
		if got := res.Records[i].CachedTokens; got != want {
			t.Errorf("turn %d: %d cached tokens, want %d", i+1, got, want)
		}
	}
}

// TestSessionEnds: turns that end in every way — dropped (too long),
// abandoned by the client's timeout, completed — each end once and each
// lets its session go on, on a disaggregated cluster; two runs are
// identical.
func TestSessionEnds(t *testing.T) {
	run := func() (*Result, *scriptSessions) {
		src := chatSessions(30, 4, 1000)
		for i := range src.turns {
			switch {
			case i%7 == 0:
				src.turns[i][1].prompt, src.turns[i][1].output = 9000, 5 // more than the pool holds: dropped
			case i%5 == 0:
				src.turns[i][2].output = 400 // past the client's timeout: abandoned
			}
		}
		cfg := pdConfig(t, nil)
		cfg.Source = src
		cfg.Router = &router.LeastLoaded{}
		cfg.Client = Client{TimeoutNs: 200_000}
		return mustRun(t, cfg), src
	}
	res, src := run()
	checkConservation(t, res.Records, 120)
	var counts [results.Abandoned + 1]int
	for _, r := range res.Records {
		counts[r.Status]++
	}
	if counts[results.Dropped] == 0 || counts[results.Abandoned] == 0 || counts[results.Completed] == 0 {
		t.Errorf("statuses %v: want drops, abandons and completions", counts)
	}
	for i, n := range src.calls {
		if n != 4 {
			t.Errorf("session %d: NextTurn asked %d times, want 4", i, n)
		}
	}
	again, _ := run()
	if d := sameResult(res, again); d != "" {
		t.Errorf("two runs differ: %s", d)
	}
}

// TestSessionNotClosedLoop: a session source in a closed loop is refused.
func TestSessionNotClosedLoop(t *testing.T) {
	cfg := colocatedConfig(t, 4096, nil)
	cfg.Source = chatSessions(1, 2, 0)
	cfg.Client = Client{Concurrency: 2}
	if _, err := Run(cfg); err == nil {
		t.Fatal("a session source ran in a closed loop")
	}
}

// hiddenSessions hides its source's NextTurn: a source that yields turns
// of sessions without being a SessionSource, as a wrapper that forgets to
// forward NextTurn would.
type hiddenSessions struct{ src Source }

func (h hiddenSessions) Next(r *Request) (bool, error) { return h.src.Next(r) }

// TestTurnFromNoSessionSource: a turn read from a source that yields no
// sessions ends the run with an error naming the request, not a panic.
func TestTurnFromNoSessionSource(t *testing.T) {
	cfg := colocatedConfig(t, 4096, nil)
	cfg.Source = hiddenSessions{chatSessions(2, 2, 0)}
	_, err := Run(cfg)
	if err == nil || err.Error() != "sim: request 0 is turn 1 of session 0, but the source yields no sessions (it is no SessionSource)" {
		t.Fatalf("error %v", err)
	}
}
