package sim

import (
	"fmt"
	"testing"

	"handoff/models/router"
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

// countingRouter is a least-loaded router that counts its decisions.
type countingRouter struct {
	*router.LeastLoaded
	decisions int
}

func (r *countingRouter) Route(q *router.Request, c *router.Cluster) router.Decision {
	r.decisions++
	return r.LeastLoaded.Route(q, c)
}

// TestDecisionsFillOnlyChangedViews runs 2,000 requests on 4,096
// colocated instances under least_loaded, which reads only its
// bookkeeping: a decision fills the views whose bookkeeping changed since
// the one before — a few — not a view per instance, so that what it costs
// does not grow with the fleet.
func TestDecisionsFillOnlyChangedViews(t *testing.T) {
	const n = 4096
	rt := &countingRouter{LeastLoaded: &router.LeastLoaded{}}
	cfg := &Config{Name: "wide", Instances: instances(RoleColocated, n, engineCfg(t, 1000, 2048, 64, false),
		linearTimer(cfA, cfB)), Router: rt, Source: &sliceSource{reqs: benchRequests(2000, 1e4)}}
	c, err := drive(t, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	perDecision := float64(c.routing.filled-n) / float64(rt.decisions) // less the first listing's
	t.Logf("%d decisions, %.2f views filled a decision", rt.decisions, perDecision)
	if rt.decisions < 2000 || perDecision > 4 {
		t.Fatalf("%d decisions filled %.1f views each on %d instances, want at most 4", rt.decisions, perDecision, n)
	}
}

// prefillerViews is a router that sends every request to prefiller 0 and
// decoder 1 at arrival, recording what it sees of the prefiller.
type prefillerViews struct{ seen []string }

func (r *prefillerViews) Route(_ *router.Request, c *router.Cluster) router.Decision {
	v := c.Prefill[0]
	r.seen = append(r.seen, fmt.Sprintf("outstanding %d routed %d", v.Outstanding, v.Routed))
	return router.Decision{Prefill: 0, Decode: 1}
}

// TestPrefillerRoutedCountsUntilTheEnd: a prefiller's Routed (SGLang's
// load guard) counts a request from routing until it finishes decoding
// on its decoder, where Outstanding ends with the prefill.
func TestPrefillerRoutedCountsUntilTheEnd(t *testing.T) {
	// Request 1's prefill ends near 3 µs, its transfer near 41 µs, its
	// 50 tokens near 92 µs: request 2 arrives while it decodes, request
	// 3 after it finished.
	reqs := []Request{{ID: 1, ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 50},
		{ID: 2, ArrivalNs: 60_000, PromptTokens: 100, OutputTokens: 1},
		{ID: 3, ArrivalNs: 1_000_000, PromptTokens: 100, OutputTokens: 1}}
	cfg := pdConfig(t, reqs)
	rt := &prefillerViews{}
	cfg.Router = rt
	mustRun(t, cfg)
	want := "[outstanding 0 routed 0 outstanding 0 routed 1 outstanding 0 routed 0]"
	if got := fmt.Sprint(rt.seen); got != want {
		t.Errorf("the prefiller's views %s, want %s", got, want)
	}
}
