package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"handoff/scenarios/experiment/capacity"
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
		if _, _, err := capacity.ParseCount(c); err != nil {
			return err
		}
	}
	return nil
}

// runPlan searches for the cheapest fleet (capacity.Plan), the progress
// line on stderr, prints what it ran and found, and writes the files. A
// rate no fleet serves is an error, after the table.
func runPlan(opts *planOptions, stdout io.Writer) error {
	line := newProgress(opts.stderr, opts.progress, -1, "plan")
	p, err := capacity.Plan(capacity.PlanOptions{Scenario: opts.scenario, Sets: opts.sets, Seed: opts.seed,
		Dir: opts.outDir, TargetRate: opts.targetRate, Target: opts.target, Counts: opts.counts,
		MaxCount: opts.maxCount, MaxRuns: opts.maxRuns, Exhaustive: opts.exhaustive,
		Simulate: opts.simulate.Or(os.Stderr), Warn: opts.stderr, Notes: stdout,
		Progress: func(runs int, text string) { line.update(int64(runs), text) }})
	line.finish()
	if err != nil {
		return err
	}
	write := p.WriteTable
	if opts.json {
		write = p.WriteJSON
	}
	if err := write(stdout); err != nil {
		return err
	}
	if opts.outDir != "" {
		if err := p.WriteFiles(opts.outDir); err != nil {
			return err
		}
	}
	if err := p.SearchErr(); err != nil {
		return fmt.Errorf("%w (raise --max-runs or narrow the search)", err)
	}
	if err := p.Unservable(); err != nil {
		return err
	}
	return incomplete(p.Unserved())
}
