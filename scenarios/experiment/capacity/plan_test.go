package capacity

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/scenarios/experiment"
	"handoff/scenarios/search"
)

// smallSets makes quickstart runs quick.
var smallSets = []string{"workload.synthetic.requests=200"}

// writeScenario writes quickstart with extra YAML appended and returns its path.
func writeScenario(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	doc := string(mustRead(t, quickstart)) + extra
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// planner loads opts' scenario and builds its planner, before any run.
func planner(t *testing.T, opts *PlanOptions) *Planner {
	t.Helper()
	l, err := experiment.Load(opts.Scenario, opts.Sets, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlanner(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanMatchesExhaustive runs the pruned search and the whole grid on a
// small real case: prefill and decode counts 1..3 at 60 req/s.
func TestPlanMatchesExhaustive(t *testing.T) {
	opts := &PlanOptions{Scenario: quickstart, Sets: smallSets, TargetRate: 60, MaxRuns: 100,
		Counts: []string{"prefill=1:3", "decode=1:3"}}
	opts.Simulate = experiment.Simulate(nil).Or(nil)
	choose := func(exhaustive bool) (search.Choice, *Planner) {
		p := planner(t, opts)
		f := p.space.Cheapest
		if exhaustive {
			f = p.space.Grid
		}
		c, err := f(p.evaluate, opts.MaxRuns)
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
	opts := &PlanOptions{Scenario: path, Sets: smallSets, TargetRate: 20, MaxRuns: 50, Simulate: experiment.Simulate(nil).Or(nil)}
	p := planner(t, opts)
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], "skipping pool decode on small-gpu at tp 1") {
		t.Errorf("notes = %q", p.notes)
	}
	vs := p.space.Pools[1].Variants
	if len(vs) != 3 || vs[2] != (search.Variant{Hardware: "small-gpu", TP: 2, PP: 1, CostPerHour: 2, Devices: 2}) || vs[0].CostPerHour != 3 {
		t.Errorf("decode variants = %+v", vs)
	}
}

// TestPlanSkipsIllegalTP: the plan never proposes a TP that vLLM cannot
// shard Llama-3.1-8B over (32 heads: not 3) or that leaves the H100's
// 8-GPU NVLink domain (16).
func TestPlanSkipsIllegalTP(t *testing.T) {
	path := writeScenario(t, "plan:\n  pools:\n    decode: {count: [1, 2], tp: [1, 3, 16]}\n")
	opts := &PlanOptions{Scenario: path, Sets: smallSets, TargetRate: 20, MaxRuns: 50, Simulate: experiment.Simulate(nil).Or(nil)}
	p := planner(t, opts)
	if len(p.notes) != 2 || !strings.Contains(p.notes[0], "skipping pool decode on h100-sxm at tp 3") ||
		!strings.Contains(p.notes[1], "skipping pool decode on h100-sxm at tp 16") {
		t.Errorf("notes = %q", p.notes)
	}
	if vs := p.space.Pools[1].Variants; len(vs) != 1 || vs[0].TP != 1 {
		t.Errorf("decode variants = %+v, want tp 1 only", vs)
	}
}

// FuzzParseCount checks that --count never panics and that every value
// it accepts is a valid range.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"decode=1:8", "prefill=2:2", "x=0:1", "=1:2", "a=1:", "a=3:1", "a=1:99999", "a=:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, rng, err := ParseCount(s)
		if err == nil && (name == "" || len(rng) != 2 || rng[0] < 1 || rng[0] > rng[1] || rng[1] > search.MaxCount) {
			t.Errorf("%q: accepted %q %v", s, name, rng)
		}
	})
}

// TestPlanKeepsAutoscaleBounds: an autoscaled pool's count is its size at
// the start, which must lie within its autoscaler's [min, max]. Without a
// plan block the pool's counts are searched within those bounds (a note
// says so); a plan block or --count outside them is refused at the
// field. Both used to fail pricing every variant at count 1 and report
// that no hardware and TP choice of the pool could be built.
func TestPlanKeepsAutoscaleBounds(t *testing.T) {
	sets := append(slices.Clip(smallSets), "pools.decode.autoscale={policy: fixed, min: 2, max: 3}")
	opts := &PlanOptions{Scenario: quickstart, Sets: sets, TargetRate: 20, MaxCount: 4, MaxRuns: 50,
		Simulate: experiment.Simulate(nil).Or(nil)}
	p := planner(t, opts)
	if d := p.space.Pools[1]; d.MinCount != 2 || d.MaxCount != 3 {
		t.Errorf("decode counts [%d, %d], want its autoscale bounds [2, 3]", d.MinCount, d.MaxCount)
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], "pool decode autoscales within [2, 3]: its counts are searched within them") {
		t.Errorf("notes = %q", p.notes)
	}
	for _, tc := range []struct{ file, count, want string }{
		{writeScenario(t, "plan:\n  pools:\n    decode: {count: [1, 3]}\n"), "",
			"s.yaml:31: field plan.pools.decode.count: [1, 3] leaves the pool's autoscale bounds [min 2, max 3]"},
		{quickstart, "decode=2:4", "--count decode=2:4: leaves the pool's autoscale bounds [min 2, max 3]"},
	} {
		opts := &PlanOptions{Scenario: tc.file, Sets: sets, TargetRate: 20, MaxCount: 4, MaxRuns: 50}
		if tc.count != "" {
			opts.Counts = []string{tc.count}
		}
		l, err := experiment.Load(opts.Scenario, opts.Sets, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newPlanner(l, opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want %q", tc.file, tc.count, err, tc.want)
		}
	}
}

// TestPlanChoosesPipelineStages: a plan's pp list gives each TP its
// pipelined variants, priced by the devices an instance then occupies
// (tp × pp: a tp 1 × pp 2 decoder costs two H100s, $6/h), and named
// with their stages.
func TestPlanChoosesPipelineStages(t *testing.T) {
	path := writeScenario(t, `plan:
  pools:
    decode: {count: [1, 2], tp: [1], pp: [1, 2]}
`)
	p := planner(t, &PlanOptions{Scenario: path, Sets: smallSets, TargetRate: 20, MaxRuns: 50,
		Simulate: experiment.Simulate(nil).Or(nil)})
	vs := p.space.Pools[1].Variants
	if len(vs) != 2 || vs[1] != (search.Variant{Hardware: "h100-sxm", TP: 1, PP: 2, CostPerHour: 6, Devices: 2}) {
		t.Fatalf("decode variants = %+v", vs)
	}
	f := search.Fleet{Variant: []int{0, 1}, Count: []int{2, 1}}
	if got := p.space.Describe(f); got != "prefill 2×h100-sxm/tp1 + decode 1×h100-sxm/tp1/pp2" {
		t.Errorf("fleet named %q", got)
	}
}
