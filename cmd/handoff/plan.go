package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"handoff/models/strictyaml"
	"handoff/results/outdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/search"
)

// planOptions are the flags of `handoff plan`.
type planOptions struct {
	scenario   string
	outDir     string
	sets       []string
	seed       uint64
	targetRate float64  // req/s the fleet must serve
	target     float64  // attainment target; 0 = the scenario's slo.attainment
	counts     []string // --count POOL=MIN:MAX
	maxCount   int      // count range [1, maxCount] of every pool when the scenario has no plan block
	maxRuns    int
	exhaustive bool // run the whole grid instead of the pruned search
	progress   bool // --progress: draw the progress line on stderr even when it is no terminal
	json       bool // --json: print the result as JSON instead of the table

	stderr   io.Writer    // the progress line's and warnings; nil = none
	simulate simulateFunc // nil: simulate
}

// Defaults of `handoff plan`.
const (
	defaultPlanMaxCount = 8
	defaultPlanMaxRuns  = 200
)

// newPlanCmd builds `handoff plan`. runF does the work once the flags are
// parsed; nil means runPlan (tests pass their own to check parsing).
func newPlanCmd(stdout io.Writer, runF func(*planOptions, io.Writer) error) *cobra.Command {
	if runF == nil {
		runF = runPlan
	}
	opts := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan SCENARIO --target-rate R",
		Short: "Find the cheapest fleet that serves a request rate within the SLO",
		Long: "plan searches the pools' instance counts (the P:D ratio) and, where the scenario's plan block lists\n" +
			"them, hardware and TP, for the cheapest fleet (count × tp × the accelerator's cost_per_hour) whose\n" +
			"SLO attainment at R requests per second stays at or above the target. The workload's arrival rate\n" +
			"is scaled to R. It prints every fleet it ran, the Pareto front of cost against request goodput at\n" +
			"R (requests within the SLO per second of the run), and the chosen fleet. The search assumes that\n" +
			"adding instances to a pool never lowers attainment, and skips fleets that assumption rules out;\n" +
			"--exhaustive runs them all.\n\n" +
			"Without a plan block, every pool's count ranges over [1, --max-count]. A plan block:\n" +
			"  plan:\n" +
			"    pools:\n" +
			"      prefill: {count: [1, 8], hardware: [h100-sxm, h200], tp: [1, 2]}\n" +
			"      decode: {count: [1, 8]}",
		Example: "  handoff plan scenarios/quickstart.yaml --target-rate 60\n" +
			"  handoff plan scenarios/quickstart.yaml --target-rate 60 --count prefill=1:4 --count decode=1:6 -o out",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.scenario, opts.stderr = args[0], cmd.ErrOrStderr()
			if err := opts.check(); err != nil {
				return err
			}
			return runF(opts, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.outDir, "out", "o", "", "write plan.csv, the cost-vs-request-goodput plot into DIR/plots and each "+
		"finished fleet's run into DIR/probes (a rerun on DIR reuses them), to `DIR`")
	scenarioFlags(f, &opts.sets, &opts.seed)
	f.Float64Var(&opts.targetRate, "target-rate", 0, "request rate to serve, requests per s (required)")
	f.Float64Var(&opts.target, "target", 0, "attainment target in (0, 1]; default the scenario's slo.attainment")
	f.StringArrayVar(&opts.counts, "count", nil, "search `POOL=MIN:MAX` instances in a pool (repeatable; overrides the plan block)")
	f.IntVar(&opts.maxCount, "max-count", defaultPlanMaxCount, "without a plan block, search counts 1..`N` in every pool")
	f.IntVar(&opts.maxRuns, "max-runs", defaultPlanMaxRuns, "simulate at most `N` fleets")
	f.BoolVar(&opts.exhaustive, "exhaustive", false, "run every fleet in the search space, without pruning")
	f.BoolVar(&opts.progress, "progress", false,
		"draw the progress line (fleets run, the cheapest that meets the target so far) on stderr even when it is not a terminal")
	f.BoolVar(&opts.json, "json", false, "print every fleet run, the Pareto front and the choice as JSON on stdout "+
		"instead of the table (the progress line stays on stderr)")
	return cmd
}

// check rejects flag values the search cannot use.
func (o *planOptions) check() error {
	switch {
	case !(o.targetRate > 0) || o.targetRate > 1e12:
		return fmt.Errorf("--target-rate is required: a request rate in req/s, got %g", o.targetRate)
	case o.target != 0 && !(o.target > 0 && o.target <= 1):
		return fmt.Errorf("--target must be in (0, 1], got %g", o.target)
	case o.maxCount < 1 || o.maxCount > search.MaxCount:
		return fmt.Errorf("--max-count must be in [1, %d], got %d", search.MaxCount, o.maxCount)
	case o.maxRuns < 1:
		return fmt.Errorf("--max-runs must be positive, got %d", o.maxRuns)
	}
	for _, c := range o.counts {
		if _, _, err := parseCountFlag(c); err != nil {
			return err
		}
	}
	return nil
}

// parseCountFlag splits "POOL=MIN:MAX".
func parseCountFlag(s string) (string, []int, error) {
	name, rng, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rng, ":")
	a, errA := strconv.Atoi(strings.TrimSpace(lo))
	b, errB := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || !ok2 || name == "" || errA != nil || errB != nil || a < 1 || a > b || b > search.MaxCount {
		return "", nil, fmt.Errorf("--count %q: want POOL=MIN:MAX with 1 ≤ MIN ≤ MAX ≤ %d, e.g. decode=1:8", s, search.MaxCount)
	}
	return name, []int{a, b}, nil
}

// runPlan searches for the cheapest fleet, prints what it ran and found,
// and writes the files. A rate no fleet serves is an error, after the
// table. A panic becomes an error that says how to replay the run
// (evaluate names the fleet).
func runPlan(opts *planOptions, stdout io.Writer) (err error) {
	if opts.outDir != "" {
		if err := outdir.CheckDir("-o", opts.outDir); err != nil {
			return err
		}
	}
	l, err := loadScenario(opts.scenario, opts.sets, opts.seed)
	if err != nil {
		return err
	}
	rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: opts.sets}
	defer experiment.RecoverRun(&err, &rp)
	p, err := newPlanner(l, opts)
	if err != nil {
		return err
	}
	for _, note := range p.notes {
		fmt.Fprintln(stdout, note)
	}
	searchF := p.space.Cheapest
	if opts.exhaustive {
		searchF = p.space.Grid
	}
	p.line = newProgress(opts.stderr, opts.progress, -1, "plan")
	choice, searchErr := searchF(p.evaluate, opts.maxRuns)
	p.line.finish()
	if searchErr != nil && !errors.Is(searchErr, search.ErrRunBudget) {
		return searchErr
	}
	p.choice = choice
	write := p.writeTable
	if opts.json {
		write = p.writeJSON
	}
	if err := write(stdout); err != nil {
		return err
	}
	if opts.outDir != "" {
		if err := p.writeFiles(opts.outDir); err != nil {
			return err
		}
	}
	if searchErr != nil {
		return fmt.Errorf("%w (raise --max-runs or narrow the search)", searchErr)
	}
	if err := p.unservable(); err != nil {
		return err
	}
	return incomplete(p.unserved())
}

// planSpace resolves the plan block, with --count and --max-count, against
// the scenario's pools. Errors in the plan block name its line.
func planSpace(l *scenarios.Loaded, opts *planOptions) (search.Space, error) {
	pools := make([]search.ScenarioPool, len(l.Pools))
	names := make([]string, len(l.Pools))
	for i, p := range l.Pools {
		pools[i] = search.ScenarioPool{Name: p.Name, Count: p.Count, Hardware: p.Hardware, TP: p.TP}
		names[i] = p.Name
	}
	plan := &search.Plan{Pools: map[string]search.PlanPool{}}
	var defaultCount []int
	if l.Plan != nil {
		maps.Copy(plan.Pools, l.Plan.Pools)
	} else {
		defaultCount = []int{1, opts.maxCount}
	}
	for _, c := range opts.counts {
		name, rng, _ := parseCountFlag(c) // checked with the flags
		pp, ok := plan.Pools[name]
		if !ok && !slices.Contains(names, name) {
			return search.Space{}, fmt.Errorf("--count %s: no pool named %q (have %s)", c, name, strings.Join(names, ", "))
		}
		pp.Count = rng
		plan.Pools[name] = pp
	}
	s, err := plan.Space(pools, defaultCount)
	if err != nil {
		return s, locateInFile(l.File, err)
	}
	return s, nil
}

// locateInFile places a field error from the plan block at its line in
// the scenario file. The file is read again because the loaded scenario
// keeps its node tree to itself.
func locateInFile(file string, err error) error {
	var root yaml.Node
	if data, rerr := os.ReadFile(file); rerr == nil && yaml.Unmarshal(data, &root) == nil {
		return strictyaml.Locate(&root, file, "", err)
	}
	return strictyaml.Locate(nil, file, "", err)
}
