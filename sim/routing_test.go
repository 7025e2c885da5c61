package sim

import (
	"fmt"
	"testing"
)

// TestIndexedRoutingMatchesScan is metamorphic: over random swarm
// configurations (every router, disaggregated or not, stale views,
// changing fleets, crashes, tiers), a run whose views are kept current by
// what changed and whose router decides from its indexes
// (router.Indexer) and one that fills every view before each decision
// and lets the router scan them (Config.scanViews) give the same result,
// record for record; every other case refreshes the instances' state only
// every 1–20 ms, so that indexes built from it (llm-d's) serve many
// decisions. The indexed run also checks every view before each
// decision (Config.checkViews). The event counts may differ: filling a
// view reads its instance, which brings the instance's run of steps up to
// the present (steprun.go) and, when a step of it ends at that very
// instant, ends the run there.
func TestIndexedRoutingMatchesScan(t *testing.T) {
	seeds := uint64(1000)
	if testing.Short() {
		seeds = 100
	}
	for seed := *swarmSeed; seed < *swarmSeed+seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			indexed, scanned := swarmCase(t, seed), swarmCase(t, seed)
			indexed.checkViews, indexed.indexAlways, scanned.scanViews = true, true, true
			if seed%2 == 0 { // views stale for many decisions, as llm-d's are (50 ms)
				indexed.RefreshIntervalNs = int64(1+seed%20) * 1e6
				scanned.RefreshIntervalNs = indexed.RefreshIntervalNs
			}
			got, want := mustRun(t, indexed), mustRun(t, scanned)
			for i := range got.Instances {
				got.Instances[i].Stats.SteadySteps = want.Instances[i].Stats.SteadySteps
			}
			got.Events, got.Runs = want.Events, want.Runs
			if d := sameResult(got, want); d != "" {
				t.Fatalf("seed %d: indexed vs scanned routing: %s", seed, d)
			}
		})
	}
}
