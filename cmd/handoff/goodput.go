package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"handoff/scenarios/experiment/capacity"
	"handoff/scenarios/search"
)

// goodputOptions are the flags of `handoff goodput`.
type goodputOptions struct {
	scenario  string
	outDir    string
	sets      []string
	seed      uint64
	target    float64 // attainment target; 0 = the scenario's slo.attainment
	tolerance float64 // relative width of the final bracket
	maxRuns   int     // runs per search (strict and loose each)
	progress  bool    // --progress: draw the progress line on stderr even when it is no terminal
	json      bool    // --json: print the result as JSON instead of the table

	stderr   io.Writer    // the progress line's and warnings; nil = none
	simulate simulateFunc // nil: simulate
}

// newGoodputCmd builds `handoff goodput`. runF does the work once the flags
// are parsed; nil means runGoodput (tests pass their own to check parsing).
func newGoodputCmd(stdout io.Writer, runF func(*goodputOptions, io.Writer) error) *cobra.Command {
	if runF == nil {
		runF = runGoodput
	}
	opts := &goodputOptions{}
	cmd := &cobra.Command{
		Use:   "goodput SCENARIO",
		Short: "Find the highest arrival rate the fleet serves within its SLO",
		Long: "goodput finds the max goodput (DistServe's goodput): it scales the workload's arrival rate\n" +
			"(workload.rate_scale) and bisects for the highest rate at which the share of requests meeting\n" +
			"both the TTFT and the TPOT limit stays at or above the target, also per device. It reports\n" +
			"DistServe's looser variant too: TTFT and TPOT each within their limits for the target share of\n" +
			"requests (at 0.9: P90 TTFT and P90 TPOT under the limits). Each run's request goodput (its\n" +
			"requests within both limits per second of the run) is in the table. Every run uses the same\n" +
			"seed; the search assumes attainment falls as the rate rises.",
		Example: "  handoff goodput scenarios/quickstart.yaml\n" +
			"  handoff goodput scenarios/quickstart.yaml --target 0.99 --tolerance 0.05 -o out",
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
	f.StringVarP(&opts.outDir, "out", "o", "", "write goodput.csv, the attainment plot into DIR/plots and each finished run "+
		"into DIR/probes (a rerun on DIR reuses them), to `DIR`")
	f.BoolVar(&opts.progress, "progress", false,
		"draw the progress line (runs done, the current bracket) on stderr even when it is not a terminal")
	f.BoolVar(&opts.json, "json", false, "print the curve and both answers as JSON on stdout instead of the table "+
		"(the progress line stays on stderr)")
	scenarioFlags(f, &opts.sets, &opts.seed)
	f.Float64Var(&opts.target, "target", 0, "attainment target in (0, 1]; default the scenario's slo.attainment")
	f.Float64Var(&opts.tolerance, "tolerance", search.DefaultTolerance,
		"stop when the bracket [lo, hi) of rates has hi/lo − 1 below this")
	f.IntVar(&opts.maxRuns, "max-runs", search.DefaultMaxRuns, "runs at most per search (`N`)")
	return cmd
}

// check rejects flag values the search cannot use.
func (o *goodputOptions) check() error {
	switch {
	case o.target != 0 && !(o.target > 0 && o.target <= 1):
		return fmt.Errorf("--target must be in (0, 1], got %g", o.target)
	case !(o.tolerance > 0 && o.tolerance < 1):
		return fmt.Errorf("--tolerance must be in (0, 1), got %g", o.tolerance)
	case o.maxRuns < 1:
		return fmt.Errorf("--max-runs must be positive, got %d", o.maxRuns)
	}
	return nil
}

// runGoodput measures the scenario's goodput (capacity.Goodput), the
// progress line on stderr, prints the curve and the answers, and writes
// the files.
func runGoodput(opts *goodputOptions, stdout io.Writer) error {
	line := newProgress(opts.stderr, opts.progress, -1, "goodput")
	g, err := capacity.Goodput(capacity.GoodputOptions{Scenario: opts.scenario, Sets: opts.sets, Seed: opts.seed,
		Dir: opts.outDir, Target: opts.target, Tolerance: opts.tolerance, MaxRuns: opts.maxRuns,
		Simulate: opts.simulate.Or(os.Stderr), Warn: opts.stderr,
		Progress: func(runs int, text string) { line.update(int64(runs), text) }})
	line.finish()
	if err != nil {
		return err
	}
	write := g.WriteTable
	if opts.json {
		write = g.WriteJSON
	}
	if err := write(stdout); err != nil {
		return err
	}
	if opts.outDir != "" {
		if err := g.WriteFiles(opts.outDir); err != nil {
			return err
		}
	}
	return incomplete(g.Unserved())
}
