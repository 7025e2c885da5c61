package main

import (
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
