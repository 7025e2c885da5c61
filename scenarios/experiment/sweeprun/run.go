package sweeprun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/results/plot"
	"handoff/results/sweepdir"
	"handoff/scenarios/experiment"
	"handoff/scenarios/sweep"
)

// Options are what `handoff sweep` runs.
type Options struct {
	Scenario  string   // the base scenario file
	Dir       string   // the sweep directory (-o)
	Sets      []string // --set path=value, applied to the base before every point's overrides
	Vary      []string // --vary path=v1,v2,…: grid axes added to (or replacing) the sweep: block's
	Jobs      int      // points run at a time, at least 1
	Shard     string   // "i/n": run only that slice of the points; "" all of them
	KeepGoing bool     // a point that fails does not stop the others (Result.Failures)
	NoPlots   bool     // skip DIR/plots

	Simulate experiment.Simulate // nil: experiment.Run, warnings on Warn
	Warn     io.Writer           // warnings (damaged points that run again), one line each; nil: dropped
	Progress Progress            // nil: none
}

// Progress follows a sweep's points; every method is called on Run's
// goroutine.
type Progress interface {
	Start(total, resumed int) // once the points to run are known: all the shard's, and those found finished
	Step()                    // one more point finished
	Tick()                    // every second while points run, for a clock
}

// Result is what a finished sweep reports.
type Result struct {
	Scenario string        // the scenario's name
	Shard    string        // "all" or "i/n"
	Points   int           // the shard's points
	Ran      int           // those this run ran (the others were found finished)
	WallS    float64       // the time the points took to run, in seconds
	Failed   []sweep.Point // with KeepGoing, the points that failed, in order
	Failures []error       // their errors, each naming its point
	// Dropped reports the points whose runs left requests unserved; nil
	// when none did.
	Dropped error
	// Results is the path of the table written, DIR/results.csv.
	Results string
}

// Run plans the sweep and checks the output directory and every point
// still to run before it writes anything, then runs those points and
// writes results.csv (replicas.csv) and the plots. A point that fails does
// not stop the others with KeepGoing; a sweep all of whose points failed
// is an error. When ctx ends the running points finish and Run says how to
// resume.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts.Simulate = opts.Simulate.Or(opts.Warn)
	pl, pending, err := prepare(ctx, &opts)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	resumed := len(pl.points) - len(pending)
	if opts.Progress != nil {
		opts.Progress.Start(len(pl.points), resumed)
	}
	start := time.Now()
	failures, err := pl.runPoints(ctx, dir, pending, opts.Jobs, opts.KeepGoing, opts.Progress)
	if err != nil {
		return nil, stopped(err, dir, pl)
	}
	res := &Result{Scenario: pl.manifest.Scenario, Shard: pl.shard.String(), Points: len(pl.points), Ran: len(pending),
		Results: filepath.Join(dir, results.SweepResultsFile)}
	for i, err := range failures {
		if err != nil {
			res.Failed, res.Failures = append(res.Failed, pending[i]), append(res.Failures, err)
		}
	}
	if len(res.Failed) == len(pl.points) {
		return nil, fmt.Errorf("all %d points failed; the first: %w", len(res.Failed), res.Failures[0])
	}
	drops, err := sweepdir.WriteResults(dir, pl.manifest.Columns, pl.without(res.Failed))
	if err != nil {
		return nil, err
	}
	if !opts.NoPlots {
		if err := drawPlots(dir); err != nil {
			return nil, err
		}
	}
	res.WallS, res.Dropped = time.Since(start).Seconds(), drops.Err()
	return res, nil
}

// prepare plans the sweep, checks the output directory and the points
// saved in it (damaged ones are named on Warn and run again), and loads
// every point still to run; only then does it claim a fresh directory.
// It returns the plan and the points still to run.
func prepare(ctx context.Context, opts *Options) (*plan, []sweep.Point, error) {
	if opts.Jobs < 1 {
		return nil, nil, fmt.Errorf("--jobs %d: want at least 1", opts.Jobs)
	}
	if err := outdir.CheckDir("-o", opts.Dir); err != nil {
		return nil, nil, err
	}
	shard := sweep.Shard{}
	if opts.Shard != "" {
		var err error
		if shard, err = sweep.ParseShard(opts.Shard); err != nil {
			return nil, nil, err
		}
	}
	pl, err := newPlan(opts.Scenario, opts.Sets, opts.Vary, shard)
	if err != nil {
		return nil, nil, err
	}
	pl.simulate = opts.Simulate
	fresh, err := sweepdir.Check(opts.Dir, pl.manifest)
	if err != nil {
		return nil, nil, err
	}
	pending, damaged, err := pl.survey(opts.Dir)
	if err != nil {
		return nil, nil, err
	}
	if opts.Warn != nil {
		for _, d := range damaged {
			fmt.Fprintf(opts.Warn, "warning: %s; it runs again\n", experiment.OneLine(d))
		}
	}
	if err := pl.checkPoints(ctx, pending, opts.Jobs); err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, nil, errors.New("sweep interrupted while checking its points; nothing was written")
		}
		return nil, nil, err
	}
	if fresh {
		if err := sweepdir.WriteManifest(opts.Dir, pl.manifest); err != nil {
			return nil, nil, err
		}
	}
	return pl, pending, nil
}

// stopped explains a sweep that did not finish: what is saved and, after
// an interruption, how to resume.
func stopped(err error, dir string, pl *plan) error {
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

// drawPlots re-draws a sweep directory's plots (DIR/plots) from its
// results.csv and point summaries, after a sweep or a merge.
func drawPlots(dir string) error {
	if err := plot.DrawDir(dir, outdir.Saver(dir)); err != nil {
		return fmt.Errorf("results are saved, but the plots failed: %w", err)
	}
	return nil
}
