package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"handoff/scenarios/search"
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

// TestPlanMatchesExhaustive runs the pruned search and the whole grid on a
// small real case: prefill and decode counts 1..3 at 60 req/s.
func TestPlanMatchesExhaustive(t *testing.T) {
	opts := &planOptions{scenario: quickstart, sets: smallSets, targetRate: 60, maxRuns: 100,
		counts: []string{"prefill=1:3", "decode=1:3"}}
	choose := func(exhaustive bool) (search.Choice, *planner) {
		l, err := loadScenario(opts.scenario, opts.sets, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPlanner(l, opts)
		if err != nil {
			t.Fatal(err)
		}
		f := p.space.Cheapest
		if exhaustive {
			f = p.space.Grid
		}
		c, err := f(p.evaluate, opts.maxRuns)
		if err != nil {
			t.Fatal(err)
		}
		return c, p
	}
	pruned, p := choose(false)
	grid, _ := choose(true)
	if !pruned.Found || p.space.Describe(pruned.Fleet) != p.space.Describe(grid.Fleet) {
		t.Fatalf("pruned %s (found %v), grid %s", p.space.Describe(pruned.Fleet), pruned.Found, p.space.Describe(grid.Fleet))
	}
	if grid.Runs != 9 || pruned.Runs >= grid.Runs {
		t.Errorf("runs: pruned %d, grid %d; want fewer than the grid's 9", pruned.Runs, grid.Runs)
	}
	t.Logf("chose %s at $%.2f/h in %d runs (grid: 9)", p.space.Describe(pruned.Fleet), pruned.CostPerHour, pruned.Runs)
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

// TestPlanSkipsVariantThatDoesNotFit: a 10 GB accelerator cannot hold the
// 16 GB of Llama-3.1-8B weights at TP 1 but can at TP 2, where an instance
// costs 2 × $1 = $2/h, cheaper than an H100's $3.
func TestPlanSkipsVariantThatDoesNotFit(t *testing.T) {
	path := writeScenario(t, `catalog:
  accelerators:
    - {name: small-gpu, kind: gpu, memory: 10GB, memory_bandwidth: 3TB/s, bf16: 900TFLOPS,
       mfu: 0.5, mbu: 0.7, step_overhead: 1ms, scale_up: nvlink4, power_w: 300, cost_per_hour: 1}
plan:
  pools:
    decode: {count: [1, 2], hardware: [h100-sxm, small-gpu], tp: [1, 2]}
`)
	opts := &planOptions{scenario: path, sets: smallSets, targetRate: 20, maxRuns: 50}
	l, err := loadScenario(path, opts.sets, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlanner(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], "skipping pool decode on small-gpu at tp 1") {
		t.Errorf("notes = %q", p.notes)
	}
	vs := p.space.Pools[1].Variants
	if len(vs) != 3 || vs[2] != (search.Variant{Hardware: "small-gpu", TP: 2, CostPerHour: 2, Devices: 2}) || vs[0].CostPerHour != 3 {
		t.Errorf("decode variants = %+v", vs)
	}
}

// TestPlanSkipsIllegalTP: the plan never proposes a TP that vLLM cannot
// shard Llama-3.1-8B over (32 heads: not 3) or that leaves the H100's
// 8-GPU NVLink domain (16).
func TestPlanSkipsIllegalTP(t *testing.T) {
	path := writeScenario(t, "plan:\n  pools:\n    decode: {count: [1, 2], tp: [1, 3, 16]}\n")
	opts := &planOptions{scenario: path, sets: smallSets, targetRate: 20, maxRuns: 50}
	l, err := loadScenario(path, opts.sets, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlanner(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.notes) != 2 || !strings.Contains(p.notes[0], "skipping pool decode on h100-sxm at tp 3") ||
		!strings.Contains(p.notes[1], "skipping pool decode on h100-sxm at tp 16") {
		t.Errorf("notes = %q", p.notes)
	}
	if vs := p.space.Pools[1].Variants; len(vs) != 1 || vs[0].TP != 1 {
		t.Errorf("decode variants = %+v, want tp 1 only", vs)
	}
}

// FuzzParseCountFlag checks that --count never panics and that every value
// it accepts is a valid range.
func FuzzParseCountFlag(f *testing.F) {
	for _, s := range []string{"decode=1:8", "prefill=2:2", "x=0:1", "=1:2", "a=1:", "a=3:1", "a=1:99999", "a=:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, rng, err := parseCountFlag(s)
		if err == nil && (name == "" || len(rng) != 2 || rng[0] < 1 || rng[0] > rng[1] || rng[1] > search.MaxCount) {
			t.Errorf("%q: accepted %q %v", s, name, rng)
		}
	})
}
