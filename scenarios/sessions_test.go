package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"handoff/sim"
)

// TestMultiTurnScenario runs the shipped multi-turn scenario: every turn
// ends once and keeps its session and turn, later turns hit the prefix
// cache on the one instance (the history), and the run repeats exactly.
func TestMultiTurnScenario(t *testing.T) {
	run := func(sets ...string) *sim.Result {
		var ss []Set
		for _, s := range sets {
			set, err := ParseSet(s)
			if err != nil {
				t.Fatal(err)
			}
			ss = append(ss, set)
		}
		l, err := Load("multi-turn.yaml", append(ss, Set{Path: "workload.sessions.sessions", Value: "40"})...)
		res, _ := runLoaded(t, l, err)
		return res
	}
	res := run()
	const block = 16          // the engine's default block size
	last := map[int32]int32{} // per session: the previous turn's prompt
	later := 0
	for _, r := range res.Records {
		if prev, ok := last[r.Session]; ok {
			later++
			if r.CachedTokens < prev/block*block {
				t.Errorf("session %d turn %d: %d cached tokens, want at least the previous prompt's full blocks, %d",
					r.Session, r.Turn, r.CachedTokens, prev/block*block)
			}
		}
		last[r.Session] = r.PromptTokens
	}
	if len(last) != 40 || later == 0 {
		t.Errorf("%d sessions, %d later turns: want 40 sessions and some later turns", len(last), later)
	}
	again := run()
	for i := range res.Records {
		if res.Records[i] != again.Records[i] {
			t.Fatalf("request %d differs between two runs", i)
		}
	}
	for _, r := range run("pools.chat.engine.prefix_caching=false").Records {
		if r.CachedTokens != 0 {
			t.Fatalf("request %d hit a disabled cache", r.ID)
		}
	}
}

// TestSessionScenarioErrors: a session trace out of order fails the run
// naming its line; sessions refuse a closed loop and a rate scale.
func TestSessionScenarioErrors(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "s.csv")
	body := "session_id,turn,timestamp,input_tokens,output_tokens\na,1,0,50,5\na,2,,5,5\na,4,,5,5\n"
	if err := os.WriteFile(trace, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("multi-turn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, "  sessions:\n"), strings.Index(doc, "pools:")
	traced := doc[:i] + "  trace: {format: sessions, path: " + trace + "}\n" + doc[j:]
	_, b, err := parseBuild(t, traced, filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Run(b.Config); err == nil || !strings.Contains(err.Error(), "s.csv:4: turn: turn 4 of session \"a\" is out of order: want turn 3") {
		t.Errorf("out of order: %v", err)
	}
	for _, tc := range []struct{ edit, want string }{
		{"workload:\n  client: {concurrency: 4}\n", "workload.client.concurrency"},
		{"workload:\n  rate_scale: 2\n", "workload.rate_scale"},
	} {
		_, _, err := parseBuild(t, strings.Replace(doc, "workload:\n", tc.edit, 1), "m.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error naming %s", tc.edit, err, tc.want)
		}
	}
}

// TestMultiTurnEffective: the effective scenario, defaults written out
// (rate_scale: 1 among them), loads back to the same scenario.
func TestMultiTurnEffective(t *testing.T) {
	l, err := Load("multi-turn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eff, err := l.Effective("")
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(eff, "effective.yaml")
	if err != nil {
		t.Fatalf("the effective scenario does not load: %v", err)
	}
	if !reflect.DeepEqual(back.Workload, l.Workload) {
		t.Errorf("workload %+v loads back as %+v", l.Workload, back.Workload)
	}
}
