package main

import (
	"context"
	"fmt"
	"handoff/scenarios/experiment/sweeprun"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/spf13/cobra"
)

// sweepOptions are the flags of `handoff sweep`.
type sweepOptions struct {
	scenario string
	outDir   string
	sets     []string
	vary     []string
	jobs     int
	shard    string
	progress bool
	noPlots  bool
	failFast bool // stop at the first failed point (default: run the others, report, exit 2)

	simulate simulateFunc // nil: simulate
}

// sweepRunner does the work of `handoff sweep` once the flags are parsed.
type sweepRunner func(ctx context.Context, opts *sweepOptions, stdout, stderr io.Writer) error

// newSweepCmd builds `handoff sweep`. runF nil means runSweep (tests pass
// their own to check parsing).
func newSweepCmd(stdout, stderr io.Writer, runF sweepRunner) *cobra.Command {
	if runF == nil {
		runF = runSweep
	}
	opts := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep SCENARIO -o DIR",
		Short: "Run a scenario over a grid of values, in parallel, resumably",
		Long: "sweep runs one simulation per point of the scenario's sweep: block (or --vary flags),\n" +
			"on all cores, writing each point's result to DIR/points/<id>/ as soon as it finishes\n" +
			"and DIR/results.csv (one row per point) at the end. Rerunning the same command on the\n" +
			"same DIR skips finished points. --shard i/n runs the i-th (from 0) of n slices;\n" +
			"`handoff merge` joins the shards' directories. A point that fails (a simulator bug, named\n" +
			"with the command that replays it) is reported and the others finish, exit status 2;\n" +
			"--fail-fast stops at the first instead.",
		Example: "  handoff sweep scenarios/quickstart.yaml -o out --vary pools.decode.count=1,2,4\n" +
			"  handoff sweep scenarios/quickstart.yaml -o out/shard-3 --shard 3/8 -j 16",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.scenario = args[0]
			ctx, stop := interruptible(cmd.Context(), stderr)
			defer stop()
			return runF(ctx, opts, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.outDir, "out", "o", "", "write results.csv and points/ into `DIR` (required)")
	f.StringArrayVar(&opts.sets, "set", nil, "override a field of the base scenario, `path=value` (repeatable)")
	f.StringArrayVar(&opts.vary, "vary", nil, "add a grid axis, `path=v1,v2,...` (repeatable; replaces the sweep: block's axis of that path)")
	f.IntVarP(&opts.jobs, "jobs", "j", runtime.NumCPU(), "run `N` points at a time")
	f.StringVar(&opts.shard, "shard", "", "run only slice `i/n` of the points (i from 0 to n-1)")
	f.BoolVar(&opts.progress, "progress", false, "draw the progress line on stderr even when it is not a terminal")
	f.BoolVar(&opts.noPlots, "no-plots", false, "skip the plots (a shard's are redrawn by merge anyway)")
	f.BoolVar(&opts.failFast, "fail-fast", false,
		"stop at the first point that fails (default: finish the others, report the failures and exit 2)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// interruptible returns a context that the first Ctrl-C cancels (the
// sweep then stops starting points and waits for the running ones); the
// second Ctrl-C has its default effect and ends the process. stop releases
// the signal.
func interruptible(parent context.Context, stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		select {
		case <-sig:
			signal.Stop(sig)
			fmt.Fprintln(stderr, "\nhandoff: interrupted; waiting for the running points (Ctrl-C again to abandon them)")
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}

// runSweep runs the sweep (sweeprun.Run), the progress line on stderr,
// and reports it: one line on stdout, and what it lacks as incomplete.
func runSweep(ctx context.Context, opts *sweepOptions, stdout, stderr io.Writer) error {
	prog := &sweepProgressHook{w: stderr, forced: opts.progress}
	res, err := sweeprun.Run(ctx, sweeprun.Options{Scenario: opts.scenario, Dir: opts.outDir, Sets: opts.sets,
		Vary: opts.vary, Jobs: opts.jobs, Shard: opts.shard, KeepGoing: !opts.failFast, NoPlots: opts.noPlots,
		Simulate: opts.simulate.Or(os.Stderr), Warn: stderr, Progress: prog})
	prog.line.finish()
	if err != nil {
		return err
	}
	ran := fmt.Sprintf("%d ran, %d already done", res.Ran, res.Points-res.Ran)
	if len(res.Failed) > 0 {
		ran = fmt.Sprintf("%d ran, %d of them failed, %d already done", res.Ran, len(res.Failed), res.Points-res.Ran)
	}
	fmt.Fprintf(stdout, "sweep %s: shard %s, %d points (%s) in %.1f s; results in %s\n", res.Scenario,
		res.Shard, res.Points, ran, res.WallS, res.Results)
	return sweepHoles(stderr, res)
}

// sweepHoles reports what a finished sweep lacks, as incomplete: the
// failed points (the first in the error, the others on stderr before it),
// else the points that dropped requests, else nothing.
func sweepHoles(stderr io.Writer, res *sweeprun.Result) error {
	if len(res.Failed) == 0 {
		return incomplete(res.Dropped)
	}
	for _, err := range res.Failures[1:] {
		fmt.Fprintln(stderr, "handoff: also failed:", oneLine(err.Error()))
	}
	if res.Dropped != nil {
		fmt.Fprintln(stderr, "handoff:", oneLine(res.Dropped.Error()))
	}
	n, total := len(res.Failed), res.Points
	return incomplete(fmt.Errorf("%d of %d points failed (results.csv holds the %d others; rerunning the same command "+
		"retries the failed); the first: %w", n, total, total-n, res.Failures[0]))
}
