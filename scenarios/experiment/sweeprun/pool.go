package sweeprun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"handoff/scenarios/experiment"
	"handoff/scenarios/sweep"
)

// parallelResult is how one call of parallel's fn ended.
type parallelResult struct {
	i   int
	err error
}

// parallel calls fn(0) … fn(n−1) on up to jobs goroutines, starting
// them in index order. Once ctx is done or a call fails it hands out no
// new index (one already handed to a worker may still start), waits for
// the running calls, and returns the error of the lowest failed index,
// else ctx's error if some index was not run, else nil.
// done (nil: none) runs after each successful call and tick (nil: none)
// every second, both on the calling goroutine.
func parallel(ctx context.Context, n, jobs int, fn func(i int) error, done, tick func()) error {
	next, out, stop := make(chan int), make(chan parallelResult), make(chan struct{})
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				select {
				case <-stop: // a call failed, or ctx ended, while i was handed out
				case <-ctx.Done():
				default:
					out <- parallelResult{i, fn(i)}
				}
			}
		}()
	}
	go func() { feedIndexes(ctx, next, stop, n); wg.Wait(); close(out) }()
	var ticks <-chan time.Time
	if tick != nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		ticks = t.C
	}
	var first *parallelResult
	for ran := 0; ; {
		select {
		case r, ok := <-out:
			switch {
			case !ok && first != nil:
				return first.err
			case !ok && ran < n:
				return ctx.Err()
			case !ok:
				return nil
			case r.err == nil:
				if ran++; done != nil {
					done()
				}
			case first == nil:
				close(stop)
				first = &r
			case r.i < first.i:
				first = &r
			}
		case <-ticks:
			tick()
		}
	}
}

// feedIndexes sends 0 … n−1 to next, in order, until stop is closed or
// ctx is done, and then closes next.
func feedIndexes(ctx context.Context, next chan<- int, stop <-chan struct{}, n int) {
	defer close(next)
	for i := range n {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		select {
		case next <- i:
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// checkPoints loads every point's scenario once, on jobs goroutines, so
// that a bad value fails before anything is written or run.
func (pl *plan) checkPoints(ctx context.Context, points []sweep.Point, jobs int) error {
	return parallel(ctx, len(points), jobs, func(i int) (err error) {
		rp := pl.replay(points[i])
		defer experiment.RecoverRun(&err, &rp)
		_, err = pl.load(points[i])
		return err
	}, nil, nil)
}

// runPoints runs the points on jobs goroutines, each point with its own
// scenario, engine and RNG, and writes each one's files as soon as it
// finishes. With keepGoing, a point that fails is counted in the returned
// failures (by index in points) and the others run on; without it, or
// when ctx ends, it stops as parallel does and returns its error.
func (pl *plan) runPoints(ctx context.Context, dir string, points []sweep.Point, jobs int, keepGoing bool,
	prog Progress) (failures []error, err error) {
	var step, tick func()
	if prog != nil {
		step, tick = prog.Step, prog.Tick
	}
	failures = make([]error, len(points)) // each worker writes only its own points' entries
	err = parallel(ctx, len(points), jobs, func(i int) error {
		err := pl.runPoint(dir, points[i])
		if err != nil && keepGoing {
			failures[i], err = err, nil
		}
		return err
	}, step, tick)
	return failures, err
}

// runPoint simulates one point and writes its files. Its errors name the
// point; a panic becomes one that also says how to replay the point.
func (pl *plan) runPoint(dir string, p sweep.Point) error {
	err := pl.simulatePoint(dir, p)
	var ie *experiment.InternalError
	if errors.As(err, &ie) {
		return fmt.Errorf("sweep point %s: %w", p.ID, err) // the replay lists the overrides
	}
	return err
}

// simulatePoint loads, simulates and saves point p, recovering a panic.
func (pl *plan) simulatePoint(dir string, p sweep.Point) (err error) {
	rp := pl.replay(p)
	defer experiment.RecoverRun(&err, &rp)
	l, err := pl.load(p)
	if err != nil {
		return err
	}
	rp.Seed = l.Seed
	inputs, err := pl.sums.Files(l)
	if err != nil {
		return fmt.Errorf("sweep point %s: %w", p, err)
	}
	sum, _, err := pl.simulate(l)
	if err != nil {
		return fmt.Errorf("sweep point %s: %w", p, err)
	}
	return writePoint(dir, p, l, sum, inputs)
}
