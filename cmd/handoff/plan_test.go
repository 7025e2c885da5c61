package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// smallSets makes quickstart runs quick.
var smallSets = []string{"workload.synthetic.requests=200"}

func TestPlanFlags(t *testing.T) {
	var got *planOptions
	cmd := newPlanCmd(io.Discard, func(o *planOptions, _ io.Writer) error { got = o; return nil })
	cmd.SetArgs([]string{quickstart, "--target-rate", "60", "--count", "decode=1:4", "--exhaustive"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.targetRate != 60 || got.maxCount != defaultPlanMaxCount || got.maxRuns != defaultPlanMaxRuns ||
		!got.exhaustive || len(got.counts) != 1 {
		t.Errorf("options = %+v", got)
	}
	for _, bad := range [][]string{{}, {"--target-rate", "0"}, {"--target-rate", "10", "--target", "2"},
		{"--target-rate", "10", "--count", "decode=4:1"}, {"--target-rate", "10", "--count", "decode"},
		{"--target-rate", "10", "--count", "decode=0:3"}, {"--target-rate", "10", "--max-count", "0"},
		{"--target-rate", "10", "--max-runs", "0"}} {
		cmd := newPlanCmd(io.Discard, func(*planOptions, io.Writer) error { t.Error("ran with", bad); return nil })
		cmd.SetArgs(append([]string{quickstart}, bad...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

func TestPlanWritesFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "plan", quickstart, "--target-rate", "60", "--set", smallSets[0],
		"--count", "prefill=1:3", "--count", "decode=1:3", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Pareto front", "chosen: prefill ", "front"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	csv := string(readFile(t, filepath.Join(dir, "plan.csv")))
	if !strings.HasPrefix(csv, "cost_per_hour,gpus,prefill_count,prefill_hardware,prefill_tp,decode_count,") ||
		!strings.Contains(csv, "chosen") {
		t.Errorf("plan.csv:\n%s", csv)
	}
	for _, name := range []string{"pareto.png", "pareto.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, "plots", name)); err != nil || fi.Size() == 0 {
			t.Errorf("plots/%s: %v", name, err)
		}
	}
}

func TestPlanUnservable(t *testing.T) {
	code, stdout, stderr := runCLI(t, "plan", quickstart, "--target-rate", "1000", "--set", smallSets[0],
		"--count", "prefill=1:2", "--count", "decode=1:2")
	if code != 1 || !strings.Contains(stderr, "no fleet in the search space serves 1000 req/s") ||
		!strings.Contains(stderr, "the best found, prefill 2×h100-sxm/tp1 + decode 2×h100-sxm/tp1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "chosen: none") {
		t.Errorf("stdout lacks the table:\n%s", stdout)
	}
}

// writeScenario writes quickstart with extra YAML appended and returns its path.
func writeScenario(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	doc := string(readFile(t, quickstart)) + extra
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// quickstartLines is the number of lines in quickstart.yaml, so that the
// lines of appended blocks are known.
func quickstartLines(t *testing.T) int {
	return bytes.Count(readFile(t, quickstart), []byte("\n"))
}

func TestPlanBlockErrors(t *testing.T) {
	n := quickstartLines(t)
	for _, tc := range []struct{ extra, want string }{
		{"plan:\n  pools:\n    mixed: {count: [1, 2]}\n", `:%d: field plan.pools.mixed: no pool named "mixed"`},
		{"plan:\n  pools:\n    decode: {count: [3, 1]}\n", ":%d: field plan.pools.decode.count: want [min, max]"},
		{"plan:\n  pools:\n    decode: {hardware: [h900]}\n", `:%d: field plan.pools.decode.hardware: unknown accelerator "h900"`},
	} {
		path := writeScenario(t, tc.extra)
		code, _, stderr := runCLI(t, "plan", path, "--target-rate", "10", "--set", smallSets[0])
		want := strings.Replace(tc.want, "%d", strconv.Itoa(n+3), 1)
		if code != 1 || !strings.Contains(stderr, path+want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.extra, code, stderr, path+want)
		}
	}
	code, _, stderr := runCLI(t, "plan", quickstart, "--target-rate", "10", "--count", "mixed=1:2")
	if code != 1 || !strings.Contains(stderr, `--count mixed=1:2: no pool named "mixed"`) {
		t.Errorf("--count of an unknown pool: exit %d, %q", code, stderr)
	}
}
