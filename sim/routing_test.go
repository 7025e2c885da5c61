package sim

import (
	"fmt"
	"strings"
	"testing"

	"handoff/models/router"
	"handoff/results"
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

// TestRouterRejects: a request the router rejects (router.Rejected) ends
// at once, rejected with the router's reason and never served; the others are
// served, and every request ends exactly once.
func TestRouterRejects(t *testing.T) {
	reqs := make([]Request, 6)
	for i := range reqs {
		reqs[i] = Request{ID: int64(i), ArrivalNs: int64(i) * 1000, PromptTokens: 32, OutputTokens: 4}
	}
	cfg := colocatedConfig(t, 4096, reqs)
	cfg.Router = router.RouterFunc(func(r *router.Request, c *router.Cluster) router.Decision {
		if r.ID%2 == 1 {
			return router.Decision{Prefill: router.Rejected, Decode: -1, Reason: router.ReasonBusy}
		}
		return router.Decision{Prefill: c.Prefill[0].Index, Decode: -1}
	})
	res := mustRun(t, cfg)
	checkConservation(t, res.Records, len(reqs))
	for _, r := range res.Records {
		want := results.Completed
		if r.ID%2 == 1 {
			want = results.Rejected
		}
		if r.Status != want || r.Status == results.Rejected && (r.Reason != router.ReasonBusy || r.FinishNs != r.ArrivalNs) {
			t.Errorf("request %d: %v %q at %d ns (arrived %d ns), want %v", r.ID, r.Status, r.Reason, r.FinishNs, r.ArrivalNs, want)
		}
	}
}

// blocksSeen is a router that sends everything to the first instance and
// notes the active blocks it sees there when each request is routed; it
// counts output blocks when told to.
type blocksSeen struct {
	seen    map[int64]int
	outputs bool
}

func (b *blocksSeen) CountsOutputBlocks() bool { return b.outputs }

func (b *blocksSeen) Route(r *router.Request, c *router.Cluster) router.Decision {
	b.seen[r.ID] = c.Prefill[0].ActiveBlocks
	return router.Decision{Prefill: c.Prefill[0].Index, Decode: -1}
}

func (*blocksSeen) ReadsInstanceState() bool { return true }

// TestRouterCountsOutputBlocks: with RouterCountsOutputBlocks, a request
// decoding on an instance counts there its prompt's full blocks and the
// blocks its output has filled since: A (prompt 32 = 2 blocks, block 16)
// prefills in 1000 + 10·32 = 1320 ns (its first token), then decodes a
// token every 1010 ns; B arrives at 1320 + 20·1010 + 500 ns, when A has 21
// tokens: ⌈(32+21)/16⌉ − ⌈32/16⌉ = 2 output blocks, 4 in all. Without
// the option, 2.
func TestRouterCountsOutputBlocks(t *testing.T) {
	for _, tc := range []struct {
		count, eager bool
		want         int
	}{{false, false, 2}, {true, false, 4}, {true, true, 4}} { // eager: A never cruises
		reqs := []Request{{ID: 0, PromptTokens: 32, OutputTokens: 100},
			{ID: 1, ArrivalNs: 1320 + 20*cfDecodeNs + 500, PromptTokens: 16, OutputTokens: 2}}
		cfg := colocatedConfig(t, 4096, reqs)
		seen := &blocksSeen{seen: map[int64]int{}, outputs: tc.count}
		cfg.Router, cfg.eager = seen, tc.eager
		res := mustRun(t, cfg)
		checkConservation(t, res.Records, len(reqs))
		if seen.seen[1] != tc.want {
			t.Errorf("counting output blocks %v (eager %v): B saw %d active blocks, want %d", tc.count, tc.eager,
				seen.seen[1], tc.want)
		}
	}
	cfg := colocatedConfig(t, 4096, []Request{{PromptTokens: 32, OutputTokens: 1}})
	cfg.Router = countsWithoutState{&router.LeastLoaded{}}
	if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), "reads the instances' state") {
		t.Errorf("a router that reads no instance state: %v", err)
	}
}

// countsWithoutState is a router that counts output blocks but reads no
// instance state: a configuration the core refuses.
type countsWithoutState struct{ *router.LeastLoaded }

func (countsWithoutState) CountsOutputBlocks() bool { return true }
