package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"handoff/results"
	"handoff/scenarios/search"
)

func TestGoodputFlags(t *testing.T) {
	var got *goodputOptions
	cmd := newGoodputCmd(io.Discard, func(o *goodputOptions, _ io.Writer) error { got = o; return nil })
	cmd.SetArgs([]string{quickstart, "--set", "a=1", "--target", "0.95"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.scenario != quickstart || got.target != 0.95 || got.tolerance != search.DefaultTolerance ||
		got.maxRuns != search.DefaultMaxRuns || len(got.sets) != 1 {
		t.Errorf("options = %+v", got)
	}
	for _, bad := range [][]string{{"--tolerance", "0"}, {"--tolerance", "1"}, {"--target", "1.5"}, {"--target", "-0.1"},
		{"--max-runs", "0"}} {
		cmd := newGoodputCmd(io.Discard, func(*goodputOptions, io.Writer) error { t.Error("ran with", bad); return nil })
		cmd.SetArgs(append([]string{quickstart}, bad...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: got %v, want an error naming the flag", bad, err)
		}
	}
}

// TestBaseRate: constant arrivals at 20/s, 200 requests span 199 gaps of
// 50 ms, so the rate is 200 / 9.95 s = 20.1005 req/s; rate_scale 2 doubles it.
func TestBaseRate(t *testing.T) {
	for _, tc := range []struct {
		scale string
		want  float64
	}{{"1", 200 / 9.95}, {"2", 400 / 9.95}} {
		l, err := loadScenario(quickstart, []string{"workload.synthetic.requests=200",
			"workload.synthetic.arrival.process=constant", "workload.rate_scale=" + tc.scale}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := baseRate(l)
		if err != nil || math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("rate_scale %s: base rate %v (%v), want %v", tc.scale, got, err, tc.want)
		}
	}
	l, err := loadScenario(quickstart, []string{"workload.synthetic.requests=1"}, 0)
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
	opts := &goodputOptions{scenario: quickstart, outDir: dir, tolerance: 0.05, maxRuns: 20,
		sets: []string{"workload.synthetic.requests=200", "slo.tpot=14ms"}}
	l, err := loadScenario(opts.scenario, opts.sets, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := measureGoodput(l, opts)
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
	at := func(s float64) probe {
		for _, m := range g.curve {
			if m.Scale == s {
				return m
			}
		}
		t.Fatalf("scale %g not in the curve", s)
		return probe{}
	}
	if !at(st.Lo).meetsStrict(0.9) || at(st.Hi).meetsStrict(0.9) {
		t.Errorf("curve disagrees with the bracket: %+v at lo, %+v at hi", at(st.Lo), at(st.Hi))
	}
	var out bytes.Buffer
	if err := runGoodput(opts, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "req/s per GPU over 4 GPUs") {
		t.Errorf("output lacks the per-GPU goodput:\n%s", out.String())
	}
	csv := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "goodput.csv")))), "\n")
	if csv[0] != goodputCSVHeader || len(csv)-1 != len(g.curve) {
		t.Errorf("goodput.csv: header %q, %d rows; want %d", csv[0], len(csv)-1, len(g.curve))
	}
	for _, name := range []string{"goodput.png", "goodput.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, "plots", name)); err != nil || fi.Size() == 0 {
			t.Errorf("plots/%s: %v", name, err)
		}
	}
}

// qualifiedGoodput matches "goodput" and what precedes it: every mention
// in an output must be a request goodput (one run's) or a max goodput (the
// search's), never a bare "goodput" that could be either.
var qualifiedGoodput = regexp.MustCompile(`(?i)(max |request[ _-])?goodput`)

// TestGoodputNames runs every command that reports a goodput and checks
// that each mention in its output and files says which one it is.
func TestGoodputNames(t *testing.T) {
	dir := t.TempDir()
	outputs := map[string]string{}
	for name, args := range map[string][]string{
		"run":     {"run", quickstart, "-o", filepath.Join(dir, "run")},
		"goodput": {"goodput", quickstart, "--tolerance", "0.5", "-o", filepath.Join(dir, "goodput")},
		"plan":    {"plan", quickstart, "--target-rate", "20", "--max-count", "2", "-o", filepath.Join(dir, "plan")},
		"sweep":   {"sweep", quickstart, "--vary", "pools.decode.count=1,2", "--no-plots", "-o", filepath.Join(dir, "sweep")},
	} {
		code, stdout, stderr := runCLI(t, append(args, "--set", "workload.synthetic.requests=60")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if name != "sweep" { // its one line names no figure
			outputs[name+" stdout"] = strings.ReplaceAll(stdout, dir, "DIR")
		}
	}
	for _, f := range []string{"run/summary.json", "goodput/goodput.csv", "plan/plan.csv", "sweep/results.csv"} {
		outputs[f] = string(readFile(t, filepath.Join(dir, f)))
	}
	for name, text := range outputs {
		n := 0
		for _, m := range qualifiedGoodput.FindAllStringSubmatch(text, -1) {
			if n++; m[1] == "" {
				t.Errorf("%s: a bare %q", name, m[0])
			}
		}
		if n == 0 {
			t.Errorf("%s: no goodput at all", name)
		}
	}
}
