package capacity

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
	"handoff/scenarios/experiment"
)

const quickstart = "../../quickstart.yaml"

// TestBaseRate: constant arrivals at 20/s, 200 requests span 199 gaps of
// 50 ms, so the rate is 200 / 9.95 s = 20.1005 req/s; rate_scale 2 doubles it.
func TestBaseRate(t *testing.T) {
	for _, tc := range []struct {
		scale string
		want  float64
	}{{"1", 200 / 9.95}, {"2", 400 / 9.95}} {
		l, err := experiment.Load(quickstart, []string{"workload.synthetic.requests=200",
			"workload.synthetic.arrival.process=constant", "workload.rate_scale=" + tc.scale}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := baseRate(l)
		if err != nil || math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("rate_scale %s: base rate %v (%v), want %v", tc.scale, got, err, tc.want)
		}
	}
	l, err := experiment.Load(quickstart, []string{"workload.synthetic.requests=1"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseRate(l); err == nil || !strings.Contains(err.Error(), "at least two requests") {
		t.Errorf("one request: got %v", err)
	}
}

// TestLimitShares: of four requests, one rejected (fails both), one within
// both limits, one late to the first token, one slow between tokens
// (TPOT = (1100 − 100) / (11 − 1) = 100 > 50).
func TestLimitShares(t *testing.T) {
	recs := []results.Record{
		{Status: results.Rejected},
		{Status: results.Completed, ArrivalNs: 0, FirstTokenNs: 100, FinishNs: 600, OutputTokens: 11},
		{Status: results.Completed, ArrivalNs: 0, FirstTokenNs: 300, FinishNs: 800, OutputTokens: 11},
		{Status: results.Completed, ArrivalNs: 0, FirstTokenNs: 100, FinishNs: 1100, OutputTokens: 11},
	}
	ttft, tpot := results.LimitShares(recs, results.SLO{TTFTNs: 200, TPOTNs: 50})
	if ttft != 0.5 || tpot != 0.5 {
		t.Errorf("shares = %v, %v; want 0.5, 0.5", ttft, tpot)
	}
}

// TestGoodputQuickstart measures a small quickstart and checks the answer
// against its own curve: met at the goodput, missed just above it, and the
// loose variant at least as high.
func TestGoodputQuickstart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	g, err := Goodput(GoodputOptions{Scenario: quickstart, Dir: dir, Tolerance: 0.05, MaxRuns: 20,
		Sets: []string{"workload.synthetic.requests=200", "slo.tpot=14ms"}})
	if err != nil {
		t.Fatal(err)
	}
	st, lo := g.strict, g.loose
	if !st.Converged || st.Lo == 0 || math.IsInf(st.Hi, 1) || st.Hi/st.Lo-1 >= 0.05 {
		t.Fatalf("strict bracket %+v: want converged to 5%%", st)
	}
	if lo.Lo < st.Lo {
		t.Errorf("loose goodput scale %g below the strict %g", lo.Lo, st.Lo)
	}
	at := func(s float64) Probe {
		for _, m := range g.curve {
			if m.Scale == s {
				return m
			}
		}
		t.Fatalf("scale %g not in the curve", s)
		return Probe{}
	}
	if !at(st.Lo).MeetsStrict(0.9) || at(st.Hi).MeetsStrict(0.9) {
		t.Errorf("curve disagrees with the bracket: %+v at lo, %+v at hi", at(st.Lo), at(st.Hi))
	}
	var out bytes.Buffer
	if err := g.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "req/s per GPU over 4 GPUs") {
		t.Errorf("output lacks the per-GPU goodput:\n%s", out.String())
	}
	csv := strings.Split(strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "goodput.csv")))), "\n")
	if csv[0] != goodputCSVHeader || len(csv)-1 != len(g.curve) {
		t.Errorf("goodput.csv: header %q, %d rows; want %d", csv[0], len(csv)-1, len(g.curve))
	}
	for _, name := range []string{"goodput.png", "goodput.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, "plots", name)); err != nil || fi.Size() == 0 {
			t.Errorf("plots/%s: %v", name, err)
		}
	}
}

// mustRead returns a file's contents.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
