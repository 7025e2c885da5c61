package sim

import (
	"fmt"
	"testing"

	"handoff/models/engine"
	"handoff/models/perf"
	"handoff/models/router"
)

// TestViewsSkippedMatchFilled is metamorphic: over random swarm
// configurations whose router reads no view state (router.StateReader),
// a run that skips filling the views and one that fills them all
// (Config.allViews) give the same result, record for record — the views'
// list of instances, which such a router does read, follows joins,
// drains and crashes either way.
func TestViewsSkippedMatchFilled(t *testing.T) {
	cases := 0
	for seed := *swarmSeed; cases < 40 && seed < *swarmSeed+2000; seed++ {
		if router.ReadsState(swarmCase(t, seed).Router) {
			continue
		}
		cases++
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			skipped, filled := swarmCase(t, seed), swarmCase(t, seed)
			skipped.allViews, filled.allViews = false, true // the swarm draws it
			skipped.Records, filled.Records = nil, nil      // compare every record
			if d := sameResult(mustRun(t, skipped), mustRun(t, filled)); d != "" {
				t.Fatalf("seed %d: views skipped vs filled: %s", seed, d)
			}
		})
	}
	if cases < 40 {
		t.Fatalf("only %d cases with a router that reads no state", cases)
	}
}

// TestRunsMatchEagerOnAGrid is TestFastPathsMatchEager with every step
// time rounded up to a whole microsecond and every arrival on one, so that
// steps of different instances, and arrivals, often end at the same
// nanosecond as a run's step: the order of same-instant events is what a
// run must keep.
func TestRunsMatchEagerOnAGrid(t *testing.T) {
	const seeds = 80 // a tenth of a second; fewer no longer meet a tie (the swarm's draws widened)
	var runSteps, ties int64
	for seed := *swarmSeed; seed < *swarmSeed+seeds; seed++ {
		steps, tied := runsMatchEagerOnGrid(t, seed, false)
		runSteps, ties = runSteps+steps, ties+tied
	}
	t.Logf("%d steps inside runs, %d runs ended at a step's end", runSteps, ties)
	if runSteps == 0 || ties == 0 {
		t.Fatalf("%d steps inside runs, %d runs ended at a step's end: the grid no longer exercises them", runSteps, ties)
	}
}

// TestRunsMatchEagerWhileAnAbandonWaits holds swarm case 340 on the grid
// to eager steps: a client's first-token timeout meets its request inside
// a prefill, so its abort waits for a step's end — of any instance, not
// only its prefiller's — and with other instances inside runs the abort
// came a step later than step by step (its request's queueing and prefill
// times split 1 µs differently).
func TestRunsMatchEagerWhileAnAbandonWaits(t *testing.T) {
	runsMatchEagerOnGrid(t, 340, false)
}

// TestRunsMatchEagerInChangingFleets is TestRunsMatchEagerOnAGrid over the
// swarm's changing fleets, kept: autoscaling, crashes and their
// fail-overs, drains and stragglers, with runs of steady steps on the
// instances between them.
func TestRunsMatchEagerInChangingFleets(t *testing.T) {
	cases, withRuns, runSteps := 0, 0, int64(0)
	for seed := *swarmSeed; cases < 300 && seed < *swarmSeed+3000; seed++ {
		if !swarmCase(t, seed).fleetOn() {
			continue
		}
		cases++
		steps, _ := runsMatchEagerOnGrid(t, seed, true)
		if steps > 0 {
			withRuns++
		}
		runSteps += steps
	}
	t.Logf("%d changing fleets, %d with runs, %d steps inside runs", cases, withRuns, runSteps)
	if withRuns < 10 { // about one in ten draws runs (27–33 of 300 over seeds 10,000 to 70,000)
		t.Fatalf("only %d of %d changing fleets ran steps without events", withRuns, cases)
	}
}

// runsMatchEagerOnGrid runs swarm case seed on a grid of a microsecond
// (every step time rounded up to one, every arrival down), with runs and
// eagerly, and fails unless they give the same result; without what
// turns runs off where that keeps the case valid (streamed KV, refusals)
// and, unless keepFleet, with a fixed fleet. It returns the steps taken
// inside runs and the runs that ended at a step's end.
func runsMatchEagerOnGrid(t *testing.T, seed uint64, keepFleet bool) (steps, ties int64) {
	t.Helper()
	const grid = 1000
	onGrid := func() *Config {
		cfg := swarmCase(t, seed)
		if keepFleet {
			fleetOnGrid(cfg, grid)
		} else {
			cfg.Scaling, cfg.Faults, cfg.FaultRates = nil, nil, nil
		}
		for i := range cfg.Instances {
			in := &cfg.Instances[i]
			in.StreamKV = false
			if in.Engine.Preemption == engine.Reject {
				in.Engine.Preemption = engine.Recompute
			}
			if in.DPRanks <= 1 {
				timer := in.Timer
				in.Timer = perf.StepTimerFunc(func(b *perf.Batch) int64 {
					return (timer.StepNs(b) + grid - 1) / grid * grid
				})
			}
		}
		onGridSource(cfg.Source, grid)
		cfg.eager, cfg.Records = false, nil // the swarm draws them
		return cfg
	}
	fast, eager := onGrid(), onGrid()
	eager.eager = true
	got, want := mustRun(t, fast), mustRun(t, eager)
	steps, ties = got.Runs.Steps, got.Runs.Ties
	for i := range got.Instances {
		got.Instances[i].Stats.SteadySteps = 0
	}
	got.Events, got.Runs = want.Events, want.Runs
	if d := sameResult(got, want); d != "" {
		t.Fatalf("seed %d: runs on a grid vs eager: %s", seed, d)
	}
	return steps, ties
}

// fleetOnGrid rounds the times of a swarm case's changing fleet — its
// scaling loops' intervals, staleness, provisioning and load times, its
// faults' starts and lengths, and the router's refresh interval, which
// places newly ready instances in its view — up to multiples of grid, so
// that scrapes, decisions and faults fall on the same nanosecond as
// steps' ends.
func fleetOnGrid(cfg *Config, grid int64) {
	up := func(ns int64) int64 { return (ns + grid - 1) / grid * grid }
	for k := range cfg.Scaling {
		s := &cfg.Scaling[k]
		s.IntervalNs, s.StalenessNs, s.ProvisionNs, s.LoadNs = up(s.IntervalNs), up(s.StalenessNs), up(s.ProvisionNs), up(s.LoadNs)
	}
	for k := range cfg.Faults {
		f := &cfg.Faults[k]
		f.AtNs, f.DurationNs = up(f.AtNs), up(f.DurationNs)
	}
	cfg.RefreshIntervalNs = up(cfg.RefreshIntervalNs)
}

// onGridSource rounds a swarm source's arrivals (and think times) down to
// multiples of grid.
func onGridSource(src Source, grid int64) {
	if s, ok := src.(*scriptSessions); ok {
		for i := range s.startsNs {
			s.startsNs[i] = s.startsNs[i] / grid * grid
			for k := range s.turns[i] {
				s.turns[i][k].thinkNs = s.turns[i][k].thinkNs / grid * grid
			}
		}
		return
	}
	reqs := src.(*sliceSource).reqs
	for i := range reqs {
		reqs[i].ArrivalNs = reqs[i].ArrivalNs / grid * grid
	}
}

// TestFastPathsMatchEager is metamorphic: over random swarm
// configurations (disaggregated or not, preemption, tiers, crashes and
// drains, every router), a run whose engines cruise and take steady
// steps and one whose engines plan every step visiting every sequence
// (Config.eager) give the same result, record for record.
func TestFastPathsMatchEager(t *testing.T) {
	seeds := uint64(60)
	if testing.Short() {
		seeds = 15
	}
	for seed := *swarmSeed; seed < *swarmSeed+seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			fast, eager := swarmCase(t, seed), swarmCase(t, seed)
			fast.eager, eager.eager = false, true  // the swarm draws it
			fast.Records, eager.Records = nil, nil // compare every record
			got, want := mustRun(t, fast), mustRun(t, eager)
			for i := range got.Instances {
				got.Instances[i].Stats.SteadySteps = 0 // the counters that differ by design
			}
			got.Events, got.Runs = want.Events, want.Runs // a run of steps is one event (steprun.go)
			if d := sameResult(got, want); d != "" {
				t.Fatalf("seed %d: fast paths vs eager: %s", seed, d)
			}
		})
	}
}
