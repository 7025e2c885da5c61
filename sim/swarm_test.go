package sim

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/models/perf"
	"handoff/models/router"
	"handoff/results"
)

var (
	swarmSeed  = flag.Uint64("swarm.seed", 1, "first seed of the swarm test")
	swarmCases = flag.Int("swarm.cases", 400, "scenarios the swarm test draws")
)

// swarmCase draws a small random cluster and workload from seed: roles,
// instance counts, pool sizes (often tight enough to preempt), budgets,
// sequence caps, chunking, prefix caching, link speed, router, and a burst
// of requests with shared prefixes; then, each from a stream of its own,
// the client, tiers, topology, sessions, fleet changes and the rest
// (swarm_draws_test.go): every field of Config, as
// TestSwarmDrawsEveryField checks. The same seed always gives the same
// configuration, built fresh (routers and sources carry state).
func swarmCase(t testing.TB, seed uint64) *Config {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	cfg := &Config{Name: fmt.Sprintf("swarm-%d", seed), Seed: seed}
	pd := rng.IntN(2) == 0
	if pd {
		cfg.Instances = append(swarmPool(t, rng, RolePrefill), swarmPool(t, rng, RoleDecode)...)
		link := hardware.Link{Name: "swarm", BandwidthBps: 1e8 * float64(1+rng.IntN(1000)),
			LatencyNs: rng.Int64N(50_000)}
		cfg.KVBytesPerToken = float64(100 + rng.IntN(200_000))
		withNICs(cfg, link)
	} else {
		cfg.Instances = swarmPool(t, rng, RoleColocated)
	}
	cfg.Router = swarmRouter(rng)
	cfg.RouterCountsSharedBlocks = !pd && router.UsesHashes(cfg.Router) && rng.IntN(2) == 0
	cfg.LockupAbortNs = 1 + rng.Int64N(2_000_000) // deadlocks (shared queues) end in failures
	if rng.IntN(3) == 0 {                         // a stale view of instance state
		cfg.RefreshIntervalNs = 1 + rng.Int64N(200_000)
	}
	cfg.Source = &sliceSource{reqs: swarmRequests(rng)}
	swarmClient(cfg, rand.New(rand.NewPCG(seed, 0xc11e)))
	swarmTiers(t, cfg, rand.New(rand.NewPCG(seed, 0x7135)))
	swarmTopology(cfg, rand.New(rand.NewPCG(seed, 0x70b0)))
	swarmSessions(cfg, rand.New(rand.NewPCG(seed, 0x5e55)))
	swarmClasses(cfg, rand.New(rand.NewPCG(seed, 0xc1a55)))
	swarmFleet(cfg, rand.New(rand.NewPCG(seed, 0xf1ee7)))
	swarmExtras(t, cfg, rand.New(rand.NewPCG(seed, 0xe7a5)))
	swarmHandoff(cfg, rand.New(rand.NewPCG(seed, 0x4a0d)))
	swarmPipeline(t, cfg, rand.New(rand.NewPCG(seed, 0x9191)))
	swarmContextRanges(cfg, rand.New(rand.NewPCG(seed, 0xc0e7)))
	return cfg
}

// swarmPipeline draws, from a stream of its own, pipeline parallelism for
// a third of the pools that can have it (paged, not a data-parallel
// group): 2 to 4 stages, each priced by the pool's timer scaled by a
// random share, joined by hops of random latency and bandwidth.
// Asynchronous scheduling is off there, as the batch queue replaces it.
func swarmPipeline(t testing.TB, cfg *Config, rng *rand.Rand) {
	drawn := map[string]*perf.Pipeline{}
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		if len(in.Engine.Layouts) > 0 || in.DPRanks > 1 || in.Engine.Spec.Tokens > 0 || in.StreamKV { // no pipeline with drafts or streamed KV
			continue
		}
		pipe, seen := drawn[in.Pool]
		if !seen {
			if rng.IntN(3) == 0 {
				pipe = swarmStages(t, in.Timer, rng)
			}
			drawn[in.Pool] = pipe
		}
		if pipe != nil {
			in.Pipeline, in.Timer = pipe, pipe
			in.Engine.Stages, in.Engine.AsyncScheduling = pipe.Stages(), false
		}
	}
}

// swarmStages is a pipeline of 2 to 4 stages over timer.
func swarmStages(t testing.TB, timer perf.StepTimer, rng *rand.Rand) *perf.Pipeline {
	n := 2 + rng.IntN(3)
	stages, hops := make([]perf.StepTimer, n), make([]perf.Hop, n-1)
	for k := range stages {
		share := 0.2 + rng.Float64()
		stages[k] = perf.StepTimerFunc(func(b *perf.Batch) int64 { return int64(float64(timer.StepNs(b)) * share) })
	}
	for k := range hops {
		hops[k] = perf.Hop{LatencyNs: rng.Int64N(20_000), NsPerToken: rng.Float64() * 50}
	}
	pipe, err := perf.NewPipeline(stages, hops)
	if err != nil {
		t.Fatal(err)
	}
	return pipe
}

// swarmFleet draws, from a stream of its own, a changing fleet for half
// the cases: pools scaled by a scripted policy (sizes at random times,
// random provisioning and load times, stale metrics), and crashes, link
// outages and degradations, and stragglers at random times — scheduled,
// or drawn from rates. Data-parallel ranks neither scale nor fail.
func swarmFleet(cfg *Config, rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		return
	}
	dp := false
	pools := map[string]int{}
	var names []string
	for _, in := range cfg.Instances {
		if in.DPRanks > 1 {
			dp = true
			pools[in.Pool] = -1
			continue
		}
		if _, ok := pools[in.Pool]; !ok {
			names = append(names, in.Pool)
		}
		pools[in.Pool]++
	}
	for _, name := range names {
		n := pools[name]
		if n < 0 || rng.IntN(3) == 0 {
			continue
		}
		s := PoolScaling{Pool: name, Min: 1, Max: n, Initial: 1 + rng.IntN(n),
			ProvisionNs: rng.Int64N(2) * rng.Int64N(500_000), LoadNs: rng.Int64N(300_000)}
		if rng.IntN(4) > 0 {
			s.IntervalNs = 20_000 + rng.Int64N(1_000_000)
			s.StalenessNs = rng.Int64N(2) * rng.Int64N(2*s.IntervalNs)
			pol := &scripted{counts: []int{1 + rng.IntN(n)}, atNs: []int64{0}}
			for at := int64(0); rng.IntN(5) > 0; {
				at += rng.Int64N(3_000_000)
				pol.atNs, pol.counts = append(pol.atNs, at), append(pol.counts, rng.IntN(n+2)) // out of bounds too: clamped
			}
			s.Policy = pol
		}
		cfg.Scaling = append(cfg.Scaling, s)
	}
	for range rng.IntN(4) {
		i := rng.IntN(len(cfg.Instances))
		if cfg.Instances[i].DPRanks > 1 {
			continue
		}
		kind := FaultCrash
		if rng.IntN(3) == 0 {
			kind = FaultStraggler
		}
		cfg.Faults = append(cfg.Faults, Fault{Kind: kind, Instance: i, AtNs: rng.Int64N(5_000_000),
			DurationNs: 1 + rng.Int64N(2_000_000), Factor: 1.5 + 3*rng.Float64()})
	}
	if cfg.Topology != nil {
		for range rng.IntN(3) {
			f := Fault{Kind: FaultLinkDegrade, Link: rng.IntN(len(cfg.Topology.Caps)), AtNs: rng.Int64N(5_000_000),
				DurationNs: 1 + rng.Int64N(1_000_000), Factor: 0.05 + 0.9*rng.Float64()}
			if rng.IntN(3) == 0 {
				f.Kind = FaultLinkDown
			}
			cfg.Faults = append(cfg.Faults, f)
		}
	}
	if !dp && rng.IntN(4) == 0 {
		cfg.FaultRates = &FaultRates{UntilNs: 5_000_000, CrashMTBFNs: 1 + rng.Int64N(5_000_000),
			StragglerMTBFNs: rng.Int64N(2) * rng.Int64N(3_000_000), StragglerNs: 1 + rng.Int64N(1_000_000),
			StragglerFactor: 1.5 + rng.Float64()}
	}
}

// swarmTiers draws, from a stream of its own, lower KV tiers for half the
// cases: each paged instance with prefix caching gets a host tier (its
// swap space, under swap), a disk or both, and sometimes all of them share
// a store, through which prefillers may hand their KV off; hybrid models'
// instances too. Capacities, offload modes, bandwidths and latencies vary.
func swarmTiers(t testing.TB, cfg *Config, rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		return
	}
	tier := func(kind engine.TierKind) *engine.Tier {
		return &engine.Tier{Kind: kind, Blocks: kv.NewTier(kind.String(), 1+rng.IntN(300)),
			Offload: engine.Offload(1 + rng.IntN(3)), WriteNsPerBlock: float64(rng.IntN(3) * rng.IntN(2000)),
			WriteLatencyNs: rng.Int64N(2) * rng.Int64N(10_000), BlockBytes: float64(1 + rng.IntN(100_000)),
			ReadBps: 1e8 * float64(1+rng.IntN(500)), ReadLatencyNs: rng.Int64N(20_000)}
	}
	var store *engine.Tier
	if rng.IntN(2) == 0 {
		store = tier(engine.TierStore)
	}
	handoff := rng.IntN(2) == 0
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		e := &in.Engine
		if !e.PrefixCaching || len(e.Layouts) > 0 {
			continue
		}
		e.Tiers = nil
		if rng.IntN(3) > 0 {
			e.Tiers, e.HostBlocks = append(e.Tiers, tier(engine.TierHost)), 0
		}
		if rng.IntN(3) == 0 {
			e.Tiers = append(e.Tiers, tier(engine.TierDisk))
		}
		if store != nil && rng.IntN(4) > 0 {
			e.Tiers = append(e.Tiers, store)
			in.KVViaStore = handoff && in.Role == RolePrefill
		}
		if e.SlidingGroups > 0 && len(e.Tiers) > 0 { // a hybrid model's sliding blocks go down only on completion
			e.Tiers[0].Offload |= engine.OffloadOnCompletion
		}
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// swarmClient draws, from a stream of its own (the other draws stay as
// they were), a front end, emission times and client timeouts, each
// absent in some cases.
func swarmClient(cfg *Config, rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		cfg.Frontend = Frontend{LatencyNs: rng.Int64N(100_000), TokenizeNsPerToken: float64(rng.IntN(3)) * rng.Float64() * 50}
	}
	if rng.IntN(2) == 0 {
		first := rng.Int64N(50_000)
		final := first + rng.Int64N(50_000)
		for i := range cfg.Instances {
			cfg.Instances[i].FirstEmitNs, cfg.Instances[i].FinalEmitNs = first, final
		}
	}
	if rng.IntN(2) == 0 {
		cfg.Client.TimeoutNs = 1 + rng.Int64N(5_000_000)
	}
	if rng.IntN(2) == 0 {
		cfg.Client.FirstTokenTimeoutNs = 1 + rng.Int64N(2_000_000)
	}
	if rng.IntN(3) == 0 { // a closed loop: the source's arrival times are ignored
		cfg.Client.Concurrency = 1 + rng.IntN(16)
		cfg.Client.ThinkNs = rng.Int64N(2) * rng.Int64N(100_000)
		if rng.IntN(2) == 0 {
			cfg.Client.Requests = int64(cfg.Client.Concurrency + rng.IntN(120))
		}
	}
	swarmRelay(cfg, rng)
}

// swarmRelay draws, in some cases, what a P/D request's decode leg costs
// besides the prefiller's emission (relay.go): each instance's own front
// end and a P/D proxy's calls.
func swarmRelay(cfg *Config, rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		for i := range cfg.Instances {
			cfg.Instances[i].Frontend = Frontend{LatencyNs: rng.Int64N(100_000), TokenizeNsPerToken: float64(rng.IntN(3)) * rng.Float64() * 50}
		}
	}
	if rng.IntN(2) == 0 {
		cfg.ProxyNs = rng.Int64N(100_000)
	}
}

// swarmArrivals is how many requests a swarm case's client sent, once
// its run is over.
func swarmArrivals(cfg *Config) int {
	if s, ok := cfg.Source.(*scriptSessions); ok {
		n := 0
		for _, k := range s.next {
			n += k // turns handed out
		}
		return n
	}
	n := len(cfg.Source.(*sliceSource).reqs)
	if l := cfg.Client.Requests; cfg.Client.Concurrency > 0 && l > 0 {
		n = min(n, int(l))
	}
	return n
}

// swarmRules draws an engine's release rules: a vLLM release's, or each
// rule on its own.
func swarmRules(rng *rand.Rand) engine.Rules {
	if rng.IntN(2) == 0 {
		vs := engine.VLLMVersions()
		r, err := engine.VLLM(vs[rng.IntN(len(vs))])
		if err != nil {
			panic(err)
		}
		return r.Rules
	}
	return engine.Rules{Admission: engine.Admission(rng.IntN(2)), SharedQueue: rng.IntN(3) == 0,
		ReserveInflight: rng.IntN(2) == 0, DeferFrees: rng.IntN(2) == 0, FencedVictim: engine.FencedVictim(rng.IntN(2))}
}

// swarmEngineKinds are the engine kinds other than vLLM the swarm runs: SGLang,
// and TensorRT-LLM under each capacity scheduler policy.
var swarmEngineKinds = []struct {
	kind      engine.Kind
	admission string
}{{engine.KindSGLang, ""}, {engine.KindTRTLLM, ""}, {engine.KindTRTLLM, engine.FirstChunk.String()}}

// swarmKind gives half the paged pools another engine kind's rules. The
// choice is read off numbers already drawn, not drawn itself, so the
// cases every seed drew before the kinds existed keep their draws.
func swarmKind(ec *engine.Config) {
	k := (ec.NumBlocks*7 + ec.MaxSeqs) % (2 * len(swarmEngineKinds))
	if len(ec.Layouts) > 0 || k >= len(swarmEngineKinds) {
		return
	}
	r, err := engine.Preset(swarmEngineKinds[k].kind, swarmEngineKinds[k].admission)
	if err != nil {
		panic(err)
	}
	ec.Admission, ec.Retract = r.Rules.Admission, r.Rules.Retract
}

// swarmPool draws one to three instances of a role with a shared engine
// configuration and step timer.
func swarmPool(t testing.TB, rng *rand.Rand, role Role) []Instance {
	ec := engine.Config{MaxBatchedTokens: 16 << rng.IntN(6), MaxSeqs: 1 + rng.IntN(16),
		BlockSize: 4 << rng.IntN(3), NumBlocks: 8 + rng.IntN(120), MaxModelLen: 1 << 20,
		PrefixCaching: rng.IntN(2) == 0, NoChunkedPrefill: rng.IntN(5) == 0, AsyncScheduling: rng.IntN(2) == 0,
		Rules: swarmRules(rng), KVConsumer: role == RoleDecode || rng.IntN(4) == 0}
	if rng.IntN(4) == 0 {
		ec.MaxModelLen = 64 + rng.IntN(512)
	}
	if ec.NoChunkedPrefill {
		// As vLLM requires without chunking: the budget covers the longest
		// context (see TestUnchunkedPromptOverBudgetEnds).
		ec.MaxBatchedTokens = max(ec.MaxBatchedTokens, 256)
		ec.MaxModelLen = min(ec.MaxModelLen, ec.MaxBatchedTokens)
	}
	switch rng.IntN(3) {
	case 1:
		ec.Preemption, ec.HostBlocks = engine.Swap, rng.IntN(200)
	case 2:
		ec.Preemption = engine.Reject
	}
	if rng.IntN(4) == 0 { // a hybrid model: sliding-window groups hold only their window
		ec.SlidingWindow, ec.SlidingGroups = 1+rng.IntN(100), 1+rng.IntN(2)
	}
	if role == RoleDecode && rng.IntN(3) == 0 { // a wafer: compiled slots
		ec.SlidingWindow, ec.SlidingGroups = 0, 0
		ec.Layouts = [][]engine.SlotClass{{{Count: 1 + rng.IntN(6), ContextTokens: 64 << rng.IntN(4)}},
			{{Count: 1 + rng.IntN(2), ContextTokens: 1024}}}
		ec.Pressure, ec.RecompileNs = engine.Pressure(rng.IntN(3)), rng.Int64N(100_000)
	} else if rng.IntN(4) == 0 {
		ec.WatermarkBlocks = rng.IntN(ec.NumBlocks / 4)
	}
	if len(ec.Layouts) == 0 && rng.IntN(4) == 0 {
		ec.Spec = swarmSpec(rng)
	}
	swarmKind(&ec)
	if err := ec.Validate(); err != nil {
		t.Fatal(err)
	}
	aNs, bNs, cNs := 100+rng.Int64N(5000), 1+rng.Int64N(20), rng.Int64N(3)
	timer := perf.StepTimerFunc(func(b *perf.Batch) int64 {
		return aNs + bNs*int64(b.Tokens()) + cNs*b.DecodeContext/16 + 50*int64(b.SwapBlocks)
	})
	insts := instances(role, 1+rng.IntN(3), ec, timer)
	if len(insts) > 1 && len(ec.Layouts) == 0 && ec.Preemption != engine.Swap && rng.IntN(3) == 0 {
		// One data-parallel group of every instance: they step together.
		group := groupTimer{timer, 10 + rng.Int64N(1000)}
		for i := range insts {
			insts[i].DPRanks, insts[i].DPRank, insts[i].Timer = len(insts), i, group
			insts[i].DPBalance = rng.IntN(2) == 0
		}
	}
	threshold, phase := rng.Float64(), 1+rng.IntN(2)
	stream, holdNs := rng.IntN(3) == 0, int64(0)
	if rng.IntN(3) == 0 {
		holdNs = 1 + rng.Int64N(100_000)
	}
	staging := 0.0
	if len(ec.Layouts) > 0 {
		staging = 1e8 * float64(1+rng.IntN(100))
	}
	for i := range insts {
		insts[i].StagingBps = staging
		insts[i].CacheHitThreshold, insts[i].RejectPhase = threshold, phase
		insts[i].StreamKV = stream
		if role == RolePrefill {
			insts[i].KVHold = KVHold{TimeoutNs: holdNs}
		}
	}
	return insts
}

// swarmRequests draws 20 to 120 requests: exponential gaps (sometimes all at
// once), prompts up to 400 tokens of which some start with one of three
// shared prefixes, outputs up to 300 tokens.
func swarmRequests(rng *rand.Rand) []Request {
	n := 20 + rng.IntN(100)
	meanGapNs := float64(rng.IntN(4) * 20_000)
	maxPrompt, maxOut := 1+rng.IntN(400), 1+rng.IntN(300)
	reqs := make([]Request, n)
	atNs := int64(0)
	for i := range reqs {
		atNs += int64(rng.ExpFloat64() * meanGapNs)
		r := Request{ArrivalNs: atNs, PromptTokens: 1 + rng.IntN(maxPrompt), OutputTokens: 1 + rng.IntN(maxOut)}
		if g := rng.IntN(4); g > 0 {
			r.Prefix = []kv.Segment{{ID: uint64(g), Tokens: min(r.PromptTokens, 16*g)}}
		}
		reqs[i] = r
	}
	return reqs
}

// swarmTally counts what the swarm exercised, so the test can fail when it
// stops covering preemption, drops, prefix hits or either cluster shape.
type swarmTally struct {
	pd, colocated, preemptions, dropped, completed, cachedTokens, rejections, swapOuts int
	local, recompiles, failed, abandoned, async, closed, tierHits, viaStore            int
	hybridTierHits                                                                     int
	scaleUps, failovers, crashes, drained, expiredReads, bounces                       int
	lockups                                                                            [results.NumLockKinds]int
	chains                                                                             int
	routers                                                                            map[string]int
}

// TestSwarm draws random clusters and workloads, runs each three times (once
// with block audits after every event, twice through Run) and checks that
// the runs agree exactly, that every request ended once and that every
// instance drained. Reproduce a failure with -swarm.seed=S -swarm.cases=1.
func TestSwarm(t *testing.T) {
	tally := swarmTally{routers: map[string]int{}}
	for k := range uint64(*swarmCases) {
		seed := *swarmSeed + k
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { swarmOne(t, seed, &tally) })
	}
	if *swarmCases >= 30 && (tally.pd == 0 || tally.colocated == 0 || tally.preemptions == 0 ||
		tally.dropped == 0 || tally.completed == 0 || tally.cachedTokens == 0 ||
		tally.rejections == 0 || tally.swapOuts == 0 || tally.local == 0 || tally.recompiles == 0 || tally.failed == 0 ||
		tally.abandoned == 0 || tally.async == 0 || tally.closed == 0 || tally.tierHits == 0 || tally.viaStore == 0 ||
		tally.hybridTierHits == 0 ||
		len(tally.routers) != len(swarmRouters)+1 /* sglang */ || tally.scaleUps == 0 || tally.failovers == 0 || tally.crashes == 0 ||
		tally.drained == 0 || tally.expiredReads == 0 || tally.bounces == 0 || slices.Contains(tally.lockups[:], 0) ||
		tally.chains == 0) {
		t.Errorf("swarm covered too little: %+v", tally)
	}
	t.Logf("swarm: %+v", tally)
}

func swarmOne(t *testing.T, seed uint64, tally *swarmTally) {
	cfg := swarmCase(t, seed)
	cfg.Records = nil // the audited run reads every record from the cluster
	c, err := drive(t, cfg, 1)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	checkConservation(t, c.recs.all, swarmArrivals(cfg))
	checkDrained(t, c)
	if n := cfg.Client.Concurrency; n > 0 {
		checkAtMost(t, c.recs.all, n)
		tally.closed++
	}
	a, b := swarmRun(t, seed), swarmRun(t, seed)
	if d := sameResult(a, b); d != "" {
		t.Fatalf("seed %d: two runs differ: %s", seed, d)
	}
	if d := sameResult(a, c.result()); d != "" {
		t.Fatalf("seed %d: Run and the audited run differ: %s", seed, d)
	}
	if cfg.Topology != nil {
		tally.pd++
	} else {
		tally.colocated++
	}
	tally.routers[fmt.Sprintf("%T", cfg.Router)]++
	tally.scaleUps += len(a.ScaleUpsNs)
	for _, p := range a.Fleet {
		for _, pt := range p.Points {
			tally.drained += pt.Draining
		}
	}
	checkLockups(t, seed, a)
	tally.chains += len(a.LockupChains)
	for i, in := range a.Instances {
		for k, n := range in.LockSpells {
			tally.lockups[k] += n
		}
		tally.crashes += int(in.Crashes)
		tally.failovers += int(in.FailedOver)
		if cfg.Instances[i].Engine.AsyncScheduling && in.Stats.Steps > 0 {
			tally.async++
		}
		tally.swapOuts += int(in.Stats.SwapOuts)
		tally.recompiles += int(in.Stats.Recompiles)
		for _, n := range in.Stats.TierHitBlocks {
			tally.tierHits += int(n)
			if cfg.Instances[i].Engine.SlidingGroups > 0 {
				tally.hybridTierHits += int(n)
			}
		}
		if cfg.Instances[i].KVViaStore && in.Stats.Steps > 0 {
			tally.viaStore++
		}
	}
	for _, r := range a.Records {
		tally.rejections += int(r.Rejections)
		tally.expiredReads += int(r.ExpiredKVReads)
		tally.bounces += int(r.Bounces)
		tally.preemptions += int(r.Preemptions)
		tally.cachedTokens += int(r.CachedTokens)
		if cfg.Topology != nil && r.DecodeInstance < 0 && r.PrefillInstance >= 0 &&
			cfg.Instances[r.PrefillInstance].Role == RoleDecode {
			tally.local++ // prefilled on its decoder
		}
		switch r.Status {
		case results.Dropped:
			tally.dropped++
		case results.Completed:
			tally.completed++
		case results.Failed:
			tally.failed++
		case results.Abandoned:
			tally.abandoned++
		}
	}
}

// swarmRun runs seed's case through Run; a record sink's records, checked
// for conservation, stand for Result.Records.
func swarmRun(t *testing.T, seed uint64) *Result {
	cfg := swarmCase(t, seed)
	res := mustRun(t, cfg)
	if sink, ok := cfg.Records.(*collect); ok {
		if res.Records != nil {
			t.Fatalf("seed %d: records kept beside a sink", seed)
		}
		checkConservation(t, sink.recs, swarmArrivals(cfg))
		res.Records = sink.recs
	}
	return res
}

// groupTimer prices a data-parallel group's step as its slowest rank's
// plus a fixed all-to-all.
type groupTimer struct {
	rank  perf.StepTimer
	a2aNs int64
}

func (g groupTimer) StepNs(b *perf.Batch) int64 { return g.rank.StepNs(b) }

func (g groupTimer) GroupStepNs(ranks []*perf.Batch) int64 {
	worst := int64(0)
	for _, b := range ranks {
		if b != nil {
			worst = max(worst, g.rank.StepNs(b))
		}
	}
	if worst == 0 {
		return 0
	}
	return worst + g.a2aNs
}

// swarmSpec draws speculative decoding: 1 to 4 draft tokens, lookahead
// slots or none, and any acceptance rates in [0, 1].
func swarmSpec(rng *rand.Rand) engine.Speculative {
	k := 1 + rng.IntN(4)
	a := make([]float64, k)
	for i := range a {
		a[i] = rng.Float64()
	}
	return engine.Speculative{Tokens: k, Lookahead: rng.IntN(2) == 0, Accept: a, Seed: rng.Uint64()}
}
