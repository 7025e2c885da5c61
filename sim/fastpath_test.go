package sim

import (
	"fmt"
	"testing"

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
			filled.allViews = true
			if d := sameResult(mustRun(t, skipped), mustRun(t, filled)); d != "" {
				t.Fatalf("seed %d: views skipped vs filled: %s", seed, d)
			}
		})
	}
	if cases < 40 {
		t.Fatalf("only %d cases with a router that reads no state", cases)
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
			eager.eager = true
			got := mustRun(t, fast)
			for i := range got.Instances {
				got.Instances[i].Stats.SteadySteps = 0 // the one counter that differs by design
			}
			if d := sameResult(got, mustRun(t, eager)); d != "" {
				t.Fatalf("seed %d: fast paths vs eager: %s", seed, d)
			}
		})
	}
}
