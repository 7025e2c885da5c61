package workload

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"handoff/sim"
)

// sessionTurn is one turn drained from a SessionSource.
type sessionTurn struct {
	req     sim.Request
	thinkNs int64
}

// drainSessions reads every session's turns, session after session.
func drainSessions(t testing.TB, src sim.SessionSource) ([][]sessionTurn, error) {
	t.Helper()
	var out [][]sessionTurn
	for {
		var r sim.Request
		ok, err := src.Next(&r)
		if err != nil || !ok {
			return out, err
		}
		turns := []sessionTurn{{req: r}}
		for {
			var n sim.Request
			think, ok, err := src.NextTurn(r.Session, &n)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			turns = append(turns, sessionTurn{n, think})
		}
		out = append(out, turns)
	}
}

func fixed(v int) Length { return Length{Dist: DistFixed, Value: v} }

// TestSessionsThreeTurnsByHand: system prompt 5, input 10, output 7, 3
// turns, think 2 s: prompts 15, 15+7+10 = 32, 32+7+10 = 49, every token
// shared content, each prefix the previous one's plus the previous output
// (exactly the segment that turn named as its Output) and the new input;
// the last turn's output, which nothing repeats, is unnamed.
func TestSessionsThreeTurnsByHand(t *testing.T) {
	think := fixed(2000)
	src, err := NewSessions(Sessions{Sessions: 2, Arrival: Arrival{Process: ProcessConstant, Rate: 0.5},
		Turns: fixed(3), InputTokens: fixed(10), OutputTokens: fixed(7), ThinkMs: &think, SystemPromptTokens: 5}, newRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := drainSessions(t, src)
	if err != nil || len(got) != 2 {
		t.Fatalf("%d sessions, %v", len(got), err)
	}
	for s, turns := range got {
		if turns[0].req.ArrivalNs != int64(s)*2e9 {
			t.Errorf("session %d starts at %d ns, want %d", s, turns[0].req.ArrivalNs, s*2e9)
		}
		for k, tt := range turns {
			r := tt.req
			wantThink := int64(2e9)
			if k == 0 {
				wantThink = 0
			}
			if r.PromptTokens != []int{15, 32, 49}[k] || r.OutputTokens != 7 || r.Turn != uint16(k+1) ||
				r.Session != int32(s) || tt.thinkNs != wantThink || prefixTokensOf(r.Prefix) != r.PromptTokens ||
				(r.Output.ID == 0) != (k == 2) || k < 2 && r.Output.Tokens != 7 {
				t.Errorf("session %d turn %d: %+v think %d", s, k+1, r, tt.thinkNs)
			}
			if k > 0 {
				prev := turns[k-1].req.Prefix
				if !slices.Equal(r.Prefix[:len(prev)], prev) || r.Prefix[len(prev)] != turns[k-1].req.Output || len(r.Prefix) != len(prev)+2 {
					t.Errorf("session %d turn %d: prefix %v does not extend %v by the output and the input", s, k+1, r.Prefix, prev)
				}
			}
		}
	}
	if got[0][1].req.Prefix[2].ID == got[1][1].req.Prefix[2].ID || got[0][0].req.Prefix[0] != got[1][0].req.Prefix[0] {
		t.Error("sessions share their turns' content, or not their system prompt")
	}
}

// TestSessionsClosedForm: with drawn lengths, turn k's prompt is turn
// k−1's prompt + output + its own input; the same seed gives the same
// sessions.
func TestSessionsClosedForm(t *testing.T) {
	spec := Sessions{Sessions: 50, Arrival: Arrival{Process: ProcessPoisson, Rate: 3},
		Turns: Length{Dist: DistUniform, Min: 1, Max: 6}, InputTokens: Length{Dist: DistUniform, Min: 1, Max: 300},
		OutputTokens: Length{Dist: DistLognormal, Mean: 100, Stddev: 80}, ThinkMs: &Length{Dist: DistUniform, Min: 1, Max: 9000}}
	run := func() [][]sessionTurn {
		src, err := NewSessions(spec, newRNG(4))
		if err != nil {
			t.Fatal(err)
		}
		got, err := drainSessions(t, src)
		if err != nil || len(got) != 50 {
			t.Fatalf("%d sessions, %v", len(got), err)
		}
		return got
	}
	got := run()
	var multi int
	for s, turns := range got {
		multi += min(len(turns)-1, 1)
		for k := 1; k < len(turns); k++ {
			prev, r := turns[k-1].req, turns[k].req
			in := r.Prefix[len(r.Prefix)-1].Tokens
			if r.PromptTokens != prev.PromptTokens+prev.OutputTokens+in || turns[k].thinkNs < 1e6 ||
				r.Prefix[len(prev.Prefix)] != prev.Output {
				t.Fatalf("session %d turn %d: prompt %d, want %d + %d + %d; think %d; repeats %v for output %v", s, k+1, r.PromptTokens,
					prev.PromptTokens, prev.OutputTokens, in, turns[k].thinkNs, r.Prefix[len(prev.Prefix)], prev.Output)
			}
		}
	}
	if multi == 0 {
		t.Fatal("no session has two turns")
	}
	if !reflect.DeepEqual(got, run()) {
		t.Error("the same seed gave different sessions")
	}
}

func TestSessionsValidate(t *testing.T) {
	ok := Sessions{Sessions: 1, Arrival: Arrival{Process: ProcessPoisson, Rate: 1}, Turns: fixed(2),
		InputTokens: fixed(1), OutputTokens: fixed(1)}
	for _, tc := range []struct {
		edit func(*Sessions)
		want string
	}{
		{func(s *Sessions) { s.Sessions = 0 }, "sessions: "},
		{func(s *Sessions) { s.Turns = Length{Dist: DistLognormal, Mean: 3, Stddev: 2} }, "turns: must be bounded by 1024"},
		{func(s *Sessions) { s.Turns = fixed(0) }, "turns.value: "},
		{func(s *Sessions) { s.SystemPromptTokens = -1 }, "system_prompt_tokens: "},
		{func(s *Sessions) { s.ThinkMs = &Length{Dist: "exp"} }, "think_ms.dist: "},
		{func(s *Sessions) { s.ThinkMs = &Length{Dist: DistFixed, Value: -1} }, "think_ms.value: must be in [0, "},
		{func(s *Sessions) { s.ThinkMs = &Length{Dist: DistUniform, Min: -1, Max: 5} }, "think_ms.min: must be ≥ 0"},
		{func(s *Sessions) { s.Arrival.Rate = 0 }, "arrival.rate: "},
	} {
		s := ok
		tc.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid spec: %v", err)
	}
}

// TestSessionsZeroThink: a think time of 0 ms, fixed or drawn, is valid
// (an omitted think_ms means 0), and a fixed 0 gives the very sessions
// an omitted one does.
func TestSessionsZeroThink(t *testing.T) {
	spec := Sessions{Sessions: 20, Arrival: Arrival{Process: ProcessPoisson, Rate: 2}, Turns: fixed(3),
		InputTokens: fixed(10), OutputTokens: fixed(7)}
	draw := func(think *Length) [][]sessionTurn {
		t.Helper()
		s := spec
		s.ThinkMs = think
		src, err := NewSessions(s, newRNG(1))
		if err != nil {
			t.Fatal(err)
		}
		got, err := drainSessions(t, src)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	zero := fixed(0)
	if !reflect.DeepEqual(draw(&zero), draw(nil)) {
		t.Error("think_ms {dist: fixed, value: 0} gave other sessions than no think_ms")
	}
	some := false
	for _, turns := range draw(&Length{Dist: DistUniform, Min: 0, Max: 1}) {
		for _, turn := range turns[1:] {
			if turn.thinkNs != 0 && turn.thinkNs != 1e6 {
				t.Fatalf("think %d ns, want 0 or 1 ms", turn.thinkNs)
			}
			some = some || turn.thinkNs == 0
		}
	}
	if !some {
		t.Error("uniform in [0, 1] ms never drew 0")
	}
}
