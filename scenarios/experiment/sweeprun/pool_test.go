package sweeprun

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestSweepParallel checks parallel's contract: every call made once
// when all succeed; the lowest failed index's error; no new calls after a
// failure or a cancel.
func TestSweepParallel(t *testing.T) {
	for _, jobs := range []int{1, 3, 16} {
		var calls, dones atomic.Int64
		seen := make([]atomic.Int64, 50)
		err := parallel(context.Background(), 50, jobs, func(i int) error {
			calls.Add(1)
			seen[i].Add(1)
			return nil
		}, func() { dones.Add(1) }, nil)
		if err != nil || calls.Load() != 50 || dones.Load() != 50 {
			t.Errorf("jobs %d: %v, %d calls, %d done", jobs, err, calls.Load(), dones.Load())
		}
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Errorf("jobs %d: index %d called %d times", jobs, i, seen[i].Load())
			}
		}

		calls.Store(0)
		err = parallel(context.Background(), 50, jobs, func(i int) error {
			calls.Add(1)
			if i == 7 || i == 5 {
				return fmt.Errorf("bad %d", i)
			}
			return nil
		}, nil, nil)
		// With one worker, index 5 fails first and at most index 6 (already
		// handed out) starts after it. With more, the others keep going
		// until the failure is seen, and 5 may be skipped if 7 fails first.
		if err == nil || (jobs == 1 && (err.Error() != "bad 5" || calls.Load() > 7)) ||
			(err.Error() != "bad 5" && err.Error() != "bad 7") {
			t.Errorf("jobs %d: error %v after %d calls", jobs, err, calls.Load())
		}

		// A cancelled context starts nothing.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		calls.Store(0)
		err = parallel(ctx, 50, jobs, func(int) error { calls.Add(1); return nil }, nil, nil)
		if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
			t.Errorf("jobs %d: cancelled before: error %v after %d calls", jobs, err, calls.Load())
		}
	}
	// With one worker, a cancel during call 2 leaves 3 … 49 unstarted.
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	err := parallel(ctx, 50, 1, func(i int) error {
		if calls.Add(1); i == 2 {
			cancel()
		}
		return nil
	}, nil, nil)
	if !errors.Is(err, context.Canceled) || calls.Load() != 3 {
		t.Errorf("cancelled during call 2: error %v after %d calls", err, calls.Load())
	}
	if err := parallel(context.Background(), 0, 4, nil, nil, nil); err != nil {
		t.Errorf("no calls: %v", err)
	}
}
