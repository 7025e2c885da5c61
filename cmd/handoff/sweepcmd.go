package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"handoff/results/outdir"
	"handoff/scenarios/sweep"
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

// runSweep plans the sweep and checks the output directory and every
// point still to run before it writes anything, then runs those points
// and writes results.csv and the plots. A point that fails does not stop
// the others (unless --fail-fast): see sweepHoles.
func runSweep(ctx context.Context, opts *sweepOptions, stdout, stderr io.Writer) error {
	pl, pending, err := prepareSweep(ctx, opts, stderr)
	if err != nil {
		return err
	}
	dir := opts.outDir
	resumed := len(pl.points) - len(pending)
	prog := newSweepProgress(stderr, opts.progress, len(pl.points), resumed)
	start := time.Now()
	failures, err := pl.runPoints(ctx, dir, pending, opts.jobs, !opts.failFast, prog)
	prog.finish()
	if err != nil {
		return sweepStopped(err, dir, pl)
	}
	failed := failedPoints(failures)
	if len(failed) == len(pl.points) {
		return fmt.Errorf("all %d points failed; the first: %w", len(failed), failures[failed[0]])
	}
	drops, err := writeResults(dir, pl.manifest.Columns, pl.without(pending, failed))
	if err != nil {
		return err
	}
	if !opts.noPlots {
		if err := drawPlots(dir); err != nil {
			return err
		}
	}
	ran := fmt.Sprintf("%d ran, %d already done", len(pending), resumed)
	if len(failed) > 0 {
		ran = fmt.Sprintf("%d ran, %d of them failed, %d already done", len(pending), len(failed), resumed)
	}
	fmt.Fprintf(stdout, "sweep %s: shard %s, %d points (%s) in %.1f s; results in %s\n", pl.manifest.Scenario,
		pl.shard, len(pl.points), ran, time.Since(start).Seconds(), filepath.Join(dir, sweepResultsFile))
	return sweepHoles(stderr, failures, failed, len(pl.points), drops.err())
}

// prepareSweep plans the sweep, checks the output directory and the points
// saved in it (damaged ones are named on stderr and run again), and loads
// every point still to run; only then does it claim a fresh directory.
// It returns the plan and the points still to run.
func prepareSweep(ctx context.Context, opts *sweepOptions, stderr io.Writer) (*sweepPlan, []sweep.Point, error) {
	if opts.jobs < 1 {
		return nil, nil, fmt.Errorf("--jobs %d: want at least 1", opts.jobs)
	}
	if err := outdir.CheckDir("-o", opts.outDir); err != nil {
		return nil, nil, err
	}
	shard := sweep.Shard{}
	if opts.shard != "" {
		var err error
		if shard, err = sweep.ParseShard(opts.shard); err != nil {
			return nil, nil, err
		}
	}
	pl, err := planSweep(opts.scenario, opts.sets, opts.vary, shard)
	if err != nil {
		return nil, nil, err
	}
	pl.simulate = opts.simulate
	fresh, err := checkSweepDir(opts.outDir, pl.manifest)
	if err != nil {
		return nil, nil, err
	}
	pending, damaged, err := pl.survey(opts.outDir)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range damaged {
		fmt.Fprintf(stderr, "warning: %s; it runs again\n", oneLine(d))
	}
	if err := pl.checkPoints(ctx, pending, opts.jobs); err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, nil, errors.New("sweep interrupted while checking its points; nothing was written")
		}
		return nil, nil, err
	}
	if fresh {
		if err := writeSweepManifest(opts.outDir, pl.manifest); err != nil {
			return nil, nil, err
		}
	}
	return pl, pending, nil
}

// failedPoints returns the indexes of the non-nil failures, in order.
func failedPoints(failures []error) []int {
	var failed []int
	for i, err := range failures {
		if err != nil {
			failed = append(failed, i)
		}
	}
	return failed
}

// sweepHoles reports what a finished sweep lacks, as incomplete: the
// failed points (the first in the error, the others on stderr before it),
// else the points that dropped requests (dropped), else nothing.
func sweepHoles(stderr io.Writer, failures []error, failed []int, total int, dropped error) error {
	if len(failed) == 0 {
		return incomplete(dropped)
	}
	for _, i := range failed[1:] {
		fmt.Fprintln(stderr, "handoff: also failed:", oneLine(failures[i].Error()))
	}
	if dropped != nil {
		fmt.Fprintln(stderr, "handoff:", oneLine(dropped.Error()))
	}
	return incomplete(fmt.Errorf("%d of %d points failed (results.csv holds the %d others; rerunning the same command "+
		"retries the failed); the first: %w", len(failed), total, total-len(failed), failures[failed[0]]))
}

// sweepStopped explains a sweep that did not finish: what is saved and,
// after an interruption, how to resume.
func sweepStopped(err error, dir string, pl *sweepPlan) error {
	done := 0
	if pending, _, serr := pl.survey(dir); serr == nil {
		done = len(pl.points) - len(pending)
	}
	saved := fmt.Sprintf("%d of %d points saved in %s", done, len(pl.points), dir)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("sweep interrupted: %s; rerun the same command to resume", saved)
	}
	return fmt.Errorf("%w (%s)", err, saved)
}
