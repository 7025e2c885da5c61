package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"handoff/hardware"
	"handoff/models/kv"
	"handoff/models/network"
	"handoff/models/router"
	"handoff/models/units"
	"handoff/results"
)

// The swarm's draws of routers and their knobs, and of what swarmCase's
// first draws leave out, each from a stream of its own: a placed topology (NVLink domains, datacenters joined by a
// WAN), sessions, and what a run may be given besides its cluster —
// owners, per-decoder KV sizes, an SLO, a lock-up threshold, a timeline,
// a tracer, a progress callback, a record sink, and the test switches
// that must change nothing (every view filled, every step planned
// eagerly). TestSwarmDrawsEveryField keeps the list whole.

// swarmTopology draws, for half the disaggregated cases, a placed
// cluster in place of the NIC topology: one to three datacenters, up to
// three NVLink domains in each, one to four GPUs an instance, and links
// of random speeds for each level.
func swarmTopology(cfg *Config, rng *rand.Rand) {
	if cfg.Topology == nil || rng.IntN(2) == 0 {
		return
	}
	link := func(name string, bps float64, latencyNs int64) hardware.Link {
		return hardware.Link{Name: name, BandwidthBps: bps * float64(1+rng.IntN(100)), LatencyNs: rng.Int64N(latencyNs)}
	}
	h := network.Hierarchy{Domain: link("domain", 1e9, 5_000), ScaleOut: link("scale-out", 1e8, 20_000),
		WAN: link("wan", 1e7, 2_000_000)}
	for k := range 1 + rng.IntN(3) {
		h.Datacenters = append(h.Datacenters, fmt.Sprintf("dc%d", k))
	}
	names := make([]string, len(cfg.Instances))
	places := make([]network.Place, len(cfg.Instances))
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		in.GPUs = 1 + rng.IntN(4)
		names[i] = in.Name
		places[i] = network.Place{Datacenter: rng.IntN(len(h.Datacenters)), Domain: rng.IntN(3), GPUs: in.GPUs}
	}
	cfg.Topology = network.NewHierarchy(h, names, places)
}

// swarmSessions makes, for a quarter of the open-loop cases, the
// requests multi-turn sessions: two to eight sessions of one to five
// turns, each turn's prompt the conversation so far (shared content, its
// answers named) plus new input, with think times between turns.
func swarmSessions(cfg *Config, rng *rand.Rand) {
	if cfg.Client.Concurrency > 0 || rng.IntN(4) > 0 {
		return
	}
	n := 2 + rng.IntN(7)
	starts := make([]int64, n)
	turns := make([][]scriptTurn, n)
	for i := range n {
		starts[i] = rng.Int64N(2_000_000)
		var chain []kv.Segment
		prompt := 0
		for t := range 1 + rng.IntN(5) {
			if t > 0 {
				chain = append(chain, turns[i][t-1].out)
				prompt += turns[i][t-1].out.Tokens
			}
			in := kv.Segment{ID: uint64(i)<<20 | uint64(t+1)<<1, Tokens: 1 + rng.IntN(64)}
			chain = append(chain, in)
			prompt += in.Tokens
			out := 1 + rng.IntN(40)
			turns[i] = append(turns[i], scriptTurn{prompt: prompt, output: out, prefix: chain[:len(chain):len(chain)],
				out: kv.Segment{ID: in.ID | 1, Tokens: out}, thinkNs: rng.Int64N(2) * rng.Int64N(200_000)})
		}
	}
	slices.Sort(starts) // a source hands out arrivals in order
	cfg.Source = newScript(starts, turns)
}

// swarmExtras draws the rest of a run's configuration, each for some
// cases: owners, decoders' own KV sizes, an SLO, a lock-up threshold, a
// timeline, a tracer, a progress callback that checks simulated time and
// ended requests never go back, a record sink, and the switches that
// must change nothing (allViews, eager, and the routers' indexes against
// their scans: indexAlways, scanViews, checkViews).
func swarmExtras(t testing.TB, cfg *Config, rng *rand.Rand) {
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		if rng.IntN(3) == 0 {
			in.Owner = fmt.Sprintf("vendor-%d", rng.IntN(3))
		}
		if in.Role == RoleDecode && rng.IntN(3) == 0 {
			in.KVIn = KVSize{PerToken: float64(rng.IntN(100_000)), WindowPerToken: float64(rng.IntN(50_000)),
				WindowTokens: rng.IntN(200)}
		}
	}
	if rng.IntN(2) == 0 {
		cfg.SLO = results.SLO{TTFTNs: 1 + rng.Int64N(2_000_000), TPOTNs: 1 + rng.Int64N(50_000), Attainment: rng.Float64()}
	}
	if rng.IntN(2) == 0 {
		cfg.LockupThresholdNs = 1 + rng.Int64N(1_000_000)
	}
	if rng.IntN(3) == 0 {
		cfg.TimelineIntervalNs, cfg.TimelineSamples = 1+rng.Int64N(1_000_000), 1+rng.IntN(50)
	}
	if rng.IntN(3) == 0 {
		cfg.Tracer, cfg.TraceRequests = &countTracer{}, rng.Int64N(20)
		if rng.IntN(2) == 0 {
			k := 1 + rng.Int64N(4)
			cfg.TraceSelect = func(id int64) bool { return id%k == 0 }
		}
	}
	if rng.IntN(3) == 0 {
		cfg.Progress = monotoneProgress(t)
	}
	if rng.IntN(3) == 0 {
		cfg.Records = &collect{}
	}
	cfg.allViews, cfg.eager = rng.IntN(4) == 0, rng.IntN(4) == 0
	cfg.indexAlways, cfg.scanViews, cfg.checkViews = rng.IntN(2) == 0, rng.IntN(4) == 0, rng.IntN(4) == 0
}

// swarmHandoff draws, from a stream of its own, the handoff's contract
// per pool: a prefill pool's lease instead of its timeout (a lease,
// heartbeats and extensions of a few µs, so that crashes strand KV that
// expires within the run) and whether it learns of refusals before
// admission; a decode pool's failure policy, and, under a router that
// picks the decoder on arrival, the decode-first flow of a paged decoder.
func swarmHandoff(cfg *Config, rng *rand.Rand) {
	_, later := cfg.Router.(router.DecodeRouter)
	pool := map[string]Instance{} // one draw per pool
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		drawn, ok := pool[in.Pool]
		if !ok {
			drawn = *in
			switch in.Role {
			case RolePrefill:
				if rng.IntN(3) == 0 {
					lease := 1 + rng.Int64N(200_000)
					ext := rng.Int64N(lease)
					drawn.KVHold = KVHold{Lease: true, LeaseNs: lease, ExtendNs: ext, HeartbeatNs: rng.Int64N(ext + 1)}
				}
				drawn.StrandRejected = rng.IntN(2) == 0
			case RoleDecode:
				drawn.RecomputeLoadFailures = rng.IntN(2) == 0
				if !later && len(in.Engine.Layouts) == 0 && rng.IntN(2) == 0 {
					drawn.DecodeFirst, drawn.DecodeFirstThreshold = true, rng.Float64()
				}
			}
			pool[in.Pool] = drawn
		}
		in.KVHold, in.StrandRejected = drawn.KVHold, drawn.StrandRejected
		in.RecomputeLoadFailures = drawn.RecomputeLoadFailures
		in.DecodeFirst, in.DecodeFirstThreshold = drawn.DecodeFirst, drawn.DecodeFirstThreshold
	}
}

// swarmContextRanges gives, for a quarter of the cases, each pool a
// context range (llm-d's context-length label) or none.
func swarmContextRanges(cfg *Config, rng *rand.Rand) {
	if rng.IntN(4) > 0 {
		return
	}
	pool := map[string][2]int{}
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		r, ok := pool[in.Pool]
		if !ok {
			if rng.IntN(3) > 0 {
				lo := rng.IntN(2) * rng.IntN(200)
				r = [2]int{lo, lo + 1 + rng.IntN(400)}
			}
			pool[in.Pool] = r
		}
		in.ContextRange = r
	}
}

// countTracer counts what a run traces.
type countTracer struct{ spans, instants, flows, counters, own int }

func (c *countTracer) Span(int64, Track, string, int64, int64)  { c.spans++ }
func (c *countTracer) Instant(int64, Track, string, int64)      { c.instants++ }
func (c *countTracer) Flow(int64, Track, int64, Track, int64)   { c.flows++ }
func (c *countTracer) Counter(Track, string, int64, float64)    { c.counters++ }
func (c *countTracer) InstanceSpan(Track, string, int64, int64) { c.own++ }

// monotoneProgress is a progress callback that fails the test when the
// simulated time or the requests ended go back, or more requests end
// than the source said it had.
func monotoneProgress(t testing.TB) func(simNs, ended, total int64) {
	var lastNs, lastEnded int64
	return func(simNs, ended, total int64) {
		if simNs < lastNs || ended < lastEnded || total >= 0 && ended > total {
			t.Errorf("progress went from %d ns and %d ended to %d ns and %d ended of %d", lastNs, lastEnded,
				simNs, ended, total)
		}
		lastNs, lastEnded = simNs, ended
	}
}

// swarmRouters names the policies the swarm draws from, one each: every
// router the scenarios can build (sglang within least_loaded's draw).
var swarmRouters = []string{"round_robin", "least_loaded", "dynamo", "llmd", "topology_aware"}

// swarmRouter draws a router and its knobs.
func swarmRouter(rng *rand.Rand) router.Router {
	seed := rng.Uint64()
	stream := rand.New(rand.NewPCG(seed, 1))
	extra := rand.New(rand.NewPCG(seed, 2)) // knobs drawn apart, so that the older draws stay as they were
	switch swarmRouters[rng.IntN(len(swarmRouters))] {
	case "round_robin":
		return &router.RoundRobin{}
	case "least_loaded":
		// SGLang's router shares this slot, drawn from the router's own
		// stream: adding it moved no other case's draws (seeds the
		// regression tests pin).
		if stream.IntN(2) == 0 {
			return router.NewSGLang(swarmSGLang(stream), stream)
		}
		return &router.LeastLoaded{}
	case "dynamo":
		return router.NewDynamo(swarmDynamo(rng, extra), stream)
	case "llmd":
		c := swarmLLMD(rng, extra)
		c.ContextLengthFilter = extra.IntN(4) == 0
		return router.NewLLMD(c, stream)
	default:
		c := swarmDynamo(rng, extra)
		c.ConditionalDisagg = false // the pair search replaces it
		return router.NewTopologyAware(c, rng.Float64()*4, stream)
	}
}

// swarmSGLang draws SGLang's router: a policy per leg, thresholds low
// enough to switch, eviction frequent and tight enough to run.
func swarmSGLang(rng *rand.Rand) router.SGLangConfig {
	c := router.DefaultSGLangConfig()
	pols := router.SGLangPolicies()
	c.Policy, c.PrefillPolicy, c.DecodePolicy = pols[rng.IntN(len(pols))], pols[rng.IntN(len(pols))], ""
	if rng.IntN(2) == 0 {
		c.DecodePolicy = pols[rng.IntN(len(pols))]
	}
	c.CacheThreshold, c.BalanceAbsThreshold, c.BalanceRelThreshold = rng.Float64(), rng.IntN(8), 1+rng.Float64()
	c.EvictionInterval, c.MaxTreeSize = units.Duration(rng.Int64N(2e9)), rng.IntN(200000)
	c.CacheMiss = router.SGLangMisses()[rng.IntN(2)]
	return c
}

// swarmDynamo draws Dynamo's knobs: credits, decay, scale, request weight,
// temperature, a queue threshold, the router's own index instead of KV
// events, busy thresholds, session affinity and conditional
// disaggregation.
func swarmDynamo(rng, extra *rand.Rand) router.DynamoConfig {
	c := router.DefaultDynamoConfig()
	c.OverlapScoreCredit = float64(rng.IntN(3))
	c.OverlapScoreCreditDecay = float64(rng.IntN(3))
	c.PrefillLoadScale = 0.5 * float64(rng.IntN(4))
	c.DecodeActiveRequestWeight = float64(rng.IntN(3))
	if rng.IntN(3) == 0 {
		c.Temperature = rng.Float64()
	}
	if rng.IntN(3) == 0 {
		c.QueueThreshold = 0.5 + 4*rng.Float64()
		c.QueuePolicy = router.QueuePolicies()[rng.IntN(len(router.QueuePolicies()))]
	}
	c.SharedCacheMultiplier = 0.5 * float64(rng.IntN(3))
	if rng.IntN(3) == 0 {
		c.UseKVEvents, c.TTL = false, units.Duration(1+rng.Int64N(1_000_000))
	}
	c.AssumeKVReuse = rng.IntN(2) == 0
	swarmDynamoBusy(&c, extra)
	if rng.IntN(2) == 0 {
		c.ConditionalDisagg = true
		c.EffISLThreshold = 1 + rng.IntN(400)
		if rng.IntN(2) == 0 {
			t := 2 * rng.Float64()
			c.PrefillBusyThreshold = &t
		}
		if rng.IntN(2) == 0 {
			t := rng.Float64()
			c.DecodeBusyThreshold = &t
		}
		policies := router.ConditionalPolicies()
		c.ConditionalPolicy = policies[rng.IntN(len(policies))]
		c.BypassBelowTokens = 1 + rng.IntN(400)
		if rng.IntN(3) == 0 {
			c.ConditionalPeekCost = router.PeekFull
		}
	}
	return c
}

// swarmDynamoBusy draws, each for a third of the cases, the frontend's
// busy thresholds (low enough that some requests are rejected, not so low
// that most are), a session affinity TTL and output-block tracking.
func swarmDynamoBusy(c *router.DynamoConfig, rng *rand.Rand) {
	if rng.IntN(3) == 0 {
		share := 0.5 + 0.5*rng.Float64()
		c.ActiveDecodeBlocksThreshold = &share
	}
	if rng.IntN(3) == 0 {
		tokens := 256 + rng.IntN(8192)
		c.ActivePrefillTokensThreshold = &tokens
	}
	if rng.IntN(3) == 0 {
		frac := 0.5 + 4*rng.Float64()
		c.ActivePrefillTokensThresholdFrac = &frac
	}
	if rng.IntN(3) == 0 {
		ttl := units.Duration(1+rng.IntN(30)) * 1e9
		c.SessionAffinityTTL = &ttl
	}
	c.TrackOutputBlocks = rng.IntN(3) == 0
}

// swarmLaterScorers are the scorers added after the swarm's seeds were
// first drawn: they draw from a stream of their own, so that a seed named
// by a regression test (TestFlowControlDropsWhatNothingCanRelease) keeps
// its case.
var swarmLaterScorers = map[string]bool{router.ScorerSessionAffinity: true, router.ScorerContextLength: true}

// swarmLLMD draws llm-d's scorers and weights, picker, decider threshold,
// index capacity and, for a third of the cases, flow control with low
// thresholds (so that it holds); swarmRouter draws the context-length
// filter for a quarter.
func swarmLLMD(rng, extra *rand.Rand) router.LLMDConfig {
	c := router.DefaultLLMDConfig()
	c.Scorers = nil
	for _, name := range router.ScorerNames() {
		src := rng
		if swarmLaterScorers[name] {
			src = extra
		}
		if src.IntN(2) == 0 {
			c.Scorers = append(c.Scorers, router.WeightedScorer{Name: name, Weight: float64(src.IntN(4))})
		}
	}
	c.Picker = router.PickerNames()[rng.IntN(len(router.PickerNames()))]
	c.NonCachedTokens = rng.IntN(2) * rng.IntN(300)
	c.LRUCapacityPerServer = 1 + rng.IntN(64)
	if rng.IntN(3) == 0 {
		c.FlowControl = &router.FlowControl{Enabled: true, QueueDepthThreshold: 1 + rng.IntN(4),
			KVCacheUtilThreshold: 0.2 + 0.8*rng.Float64()}
	}
	return c
}

// swarmClasses draws, from a stream of its own, traffic classes for half
// the cases: two or three priorities (equal ones too), each request's
// class (a session's turns share theirs), and the priority scheduling
// policy on most paged instances.
func swarmClasses(cfg *Config, rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		return
	}
	n := 2 + rng.IntN(2)
	for k := range n {
		cfg.Priorities = append(cfg.Priorities, int32(rng.IntN(3)))
		cfg.ClassNames = append(cfg.ClassNames, fmt.Sprintf("c%d", k))
	}
	switch src := cfg.Source.(type) {
	case *sliceSource:
		for i := range src.reqs {
			src.reqs[i].Class = uint8(rng.IntN(n))
		}
	case *scriptSessions:
		src.classes = make([]uint8, len(src.turns))
		for i := range src.classes {
			src.classes[i] = uint8(rng.IntN(n))
		}
	}
	for i := range cfg.Instances {
		if e := &cfg.Instances[i].Engine; len(e.Layouts) == 0 && rng.IntN(4) > 0 {
			e.Scheduling = "priority"
		}
	}
}
