package router

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"handoff/models/units"
)

// The property every Indexer keeps: its choice from its indexes is the
// choice its scan makes — the same decisions, random tie-breaks and draws
// included — over random fleets and random sequences of changes to
// their views, each told to the indexes as the core tells them.

// indexSeeds is how many random fleets each router is checked on.
func indexSeeds() int {
	if testing.Short() {
		return 60
	}
	return 400
}

// randomFleet draws a fleet of 1–40 instances (half of the fleets
// disaggregated) whose views take few distinct values, so that ties are
// common, and whose instances hold prefixes of the requests' families.
type randomFleet struct {
	c      *Cluster
	holds  map[int][choiceFamilies]int // leading blocks of each family held, by instance
	shares map[int][choiceFamilies]int // leading blocks of each family active requests hold, by instance
	rng    *rand.Rand
}

func newRandomFleet(seed uint64, disaggregated bool) *randomFleet {
	rng := rand.New(rand.NewPCG(seed, 0x1dec5))
	f := &randomFleet{holds: map[int][choiceFamilies]int{}, shares: map[int][choiceFamilies]int{}, rng: rng}
	n := 1 + rng.IntN(40)
	if disaggregated {
		n = 2 + rng.IntN(39)
	}
	vs := make([]View, n)
	for i := range vs {
		vs[i] = View{Index: 3 * i, TotalBlocks: 64, BlockSize: testBlock, MaxBatchedTokens: 16 * (1 + rng.IntN(3))}
		f.perturb(&vs[i])
	}
	f.c = &Cluster{Prefill: vs, BlockSize: testBlock,
		KVBytes: func(_, tokens int) float64 { return 1000 * float64(tokens) },
		TransferNs: func(src, dst int, bytes float64) int64 {
			if src == dst {
				return 0
			}
			return int64(src%3)*1000 + int64(bytes)
		},
		Overlap: func(i int, hashes []uint64) int {
			if len(hashes) == 0 {
				return 0
			}
			return min(f.holds[i][hashes[0]>>32], len(hashes))
		}}
	if disaggregated {
		k := 1 + rng.IntN(n-1)
		f.c.Prefill, f.c.Decode = vs[:k], vs[k:]
	}
	f.c.Caching = f.caching
	if rng.IntN(3) == 0 {
		f.c.NewBlocks, f.c.Sharing = f.newBlocks, f.sharing
	}
	if rng.IntN(6) == 0 {
		f.c.TierOverlap = func(i int, hashes []uint64, from int) TierBlocks { return TierBlocks{i % 2, 0, i % 3} }
		f.c.OnboardNs = func(i int, blocks TierBlocks) int64 { return int64(1000 * blocks.Sum()) }
	}
	for range rng.IntN(6) {
		f.cache()
	}
	return f
}

// caching names the instances holding the first of hashes, and a random
// other one now and then (Caching may name a few more).
func (f *randomFleet) caching(dst []int, hashes []uint64) []int {
	for i, m := range f.holds {
		if m[hashes[0]>>32] > 0 || f.rng.IntN(8) == 0 {
			dst = append(dst, i)
		}
	}
	return dst
}

// newBlocks is Cluster.NewBlocks from f.shares.
func (f *randomFleet) newBlocks(i int, r *Request) int {
	blocks := r.PromptTokens / testBlock
	if len(r.Hashes) == 0 {
		return blocks
	}
	return blocks - min(blocks, f.shares[i][r.Hashes[0]>>32])
}

// sharing is Cluster.Sharing from f.shares.
func (f *randomFleet) sharing(dst []int, r *Request) []int {
	if len(r.Hashes) == 0 {
		return dst
	}
	for i, m := range f.shares {
		if m[r.Hashes[0]>>32] > 0 {
			dst = append(dst, i)
		}
	}
	return dst
}

// perturb gives v new random state: small counts, so that many views tie.
func (f *randomFleet) perturb(v *View) {
	f.perturbLoad(v)
	v.Running, v.Waiting = f.rng.IntN(4), f.rng.IntN(4)
	v.FreeBlocks = f.rng.IntN(v.TotalBlocks + 1)
}

// perturbLoad gives v new random bookkeeping.
func (f *randomFleet) perturbLoad(v *View) {
	v.Outstanding = f.rng.IntN(4)
	v.ActivePrefillTokens = 8 * f.rng.IntN(5)
	v.ActiveBlocks = f.rng.IntN(5)
}

// cache makes a random instance hold a random number of a random family's
// leading blocks (0: none).
func (f *randomFleet) cache() {
	vs := append(append([]View(nil), f.c.Prefill...), f.c.Decode...)
	i := vs[f.rng.IntN(len(vs))].Index
	held := f.holds
	if f.rng.IntN(3) == 0 {
		held = f.shares
	}
	m := held[i]
	m[f.rng.IntN(choiceFamilies)] = f.rng.IntN(5)
	held[i] = m
}

// request draws a request of a random family, 0–6 blocks long.
func (f *randomFleet) request(r *Request) *Request {
	fam := uint64(f.rng.IntN(choiceFamilies))
	*r = Request{PromptTokens: f.rng.IntN(7*testBlock + 1), OutputTokens: 1}
	for b := range r.PromptTokens / testBlock {
		r.Hashes = append(r.Hashes, fam<<32|uint64(b+1))
	}
	return r
}

// change perturbs a random view — its bookkeeping, now and then its
// instance's state too — and reports its leg and position.
func (f *randomFleet) change() (decode bool, k int) {
	decode = len(f.c.Decode) > 0 && f.rng.IntN(2) == 0
	vs := f.c.Prefill
	if decode {
		vs = f.c.Decode
	}
	k = f.rng.IntN(len(vs))
	if f.rng.IntN(10) == 0 {
		f.perturb(&vs[k])
	} else {
		f.perturbLoad(&vs[k])
	}
	return decode, k
}

// checkIndexed routes random requests through an indexed router and its
// scanning twin (both made by make, with the same random stream) over a
// random fleet, changing views between decisions and telling only the
// indexed one, and fails at the first decision that differs.
func checkIndexed(t *testing.T, disaggregated bool, make func(rng *rand.Rand) Router) {
	t.Helper()
	defer func(n int) { maxListedTies = n }(maxListedTies)
	for seed := range uint64(indexSeeds()) {
		maxListedTies = []int{0, 64}[seed%2] // every other fleet finds a drawn tie by rank
		f := newRandomFleet(seed, disaggregated)
		indexed := make(rand.New(rand.NewPCG(seed, 9)))
		scanned := make(rand.New(rand.NewPCG(seed, 9)))
		ix := indexed.(Indexer)
		ix.Reindex(f.c)
		var r Request
		for step := range 60 {
			f.c.NowNs = int64(step) * 1000
			f.request(&r)
			if got, want := indexed.Route(&r, f.c), scanned.Route(&r, f.c); got != want {
				t.Fatalf("seed %d, decision %d: indexed %+v, scan %+v\nprefill %+v\ndecode %+v", seed, step, got, want,
					f.c.Prefill, f.c.Decode)
			}
			f.routeDecode(t, indexed, scanned, &r, seed, step)
			for range f.rng.IntN(4) {
				decode, k := f.change()
				ix.Changed(f.c, decode, k)
			}
			if f.rng.IntN(4) == 0 {
				f.cache()
			}
		}
	}
}

// routeDecode compares the decoders two DecodeRouters choose, if they are.
func (f *randomFleet) routeDecode(t *testing.T, indexed, scanned Router, r *Request, seed uint64, step int) {
	t.Helper()
	di, ok := indexed.(DecodeRouter)
	if !ok || len(f.c.Decode) == 0 {
		return
	}
	if got, want := di.RouteDecode(r, f.c), scanned.(DecodeRouter).RouteDecode(r, f.c); got != want {
		t.Fatalf("seed %d, decision %d: decoder indexed %d, scan %d\ndecode %+v", seed, step, got, want, f.c.Decode)
	}
}

func TestLeastLoadedIndexMatchesScan(t *testing.T) {
	for _, disaggregated := range []bool{false, true} {
		t.Run(fmt.Sprintf("disaggregated=%v", disaggregated), func(t *testing.T) {
			checkIndexed(t, disaggregated, func(*rand.Rand) Router { return &LeastLoaded{} })
		})
	}
}

// randomDynamo draws Dynamo's knobs as the swarm does: credits, decay,
// scale, request weight, a queue threshold, the router's own index, reuse,
// conditional disaggregation, and now and then a temperature (which
// scans) — weights that are not dyadic included, so that costs round.
func randomDynamo(rng *rand.Rand) DynamoConfig {
	c := DefaultDynamoConfig()
	c.OverlapScoreCredit = float64(rng.IntN(3))
	c.OverlapScoreCreditDecay = float64(rng.IntN(3))
	c.PrefillLoadScale = []float64{0, 0.5, 1, 0.7, 1.3}[rng.IntN(5)]
	c.DecodeActiveRequestWeight = []float64{0, 1, 2, 0.1}[rng.IntN(4)]
	c.SharedCacheMultiplier = []float64{0, 0.5}[rng.IntN(2)]
	if rng.IntN(6) == 0 {
		c.Temperature = rng.Float64()
	}
	if rng.IntN(3) == 0 {
		c.QueueThreshold = 0.5 + rng.Float64()
	}
	c.UseKVEvents = rng.IntN(3) > 0
	c.TTL = units.Duration(1 + 3000*rng.IntN(30))
	c.AssumeKVReuse = rng.IntN(2) == 0
	if rng.IntN(2) == 0 {
		c.ConditionalDisagg = true
		c.ConditionalPolicy = ConditionalPolicies()[rng.IntN(len(ConditionalPolicies()))]
		c.ConditionalPeekCost = []string{PeekDecode, PeekFull}[rng.IntN(2)]
		c.EffISLThreshold, c.BypassBelowTokens = rng.IntN(100), 1+rng.IntN(100)
		if rng.IntN(2) == 0 {
			c.PrefillBusyThreshold = ptr(rng.Float64() * 2)
		}
		if rng.IntN(2) == 0 {
			c.DecodeBusyThreshold = ptr(rng.Float64())
		}
	}
	return c
}

func TestDynamoIndexMatchesScan(t *testing.T) {
	for _, disaggregated := range []bool{false, true} {
		t.Run(fmt.Sprintf("disaggregated=%v", disaggregated), func(t *testing.T) {
			checkIndexed(t, disaggregated, func(rng *rand.Rand) Router {
				return NewDynamo(randomDynamo(rand.New(rand.NewPCG(rng.Uint64(), 1))), rng)
			})
		})
	}
}

func TestTopologyAwareIndexMatchesScan(t *testing.T) {
	for _, disaggregated := range []bool{false, true} {
		t.Run(fmt.Sprintf("disaggregated=%v", disaggregated), func(t *testing.T) {
			checkIndexed(t, disaggregated, func(rng *rand.Rand) Router {
				c := randomDynamo(rand.New(rand.NewPCG(rng.Uint64(), 1)))
				c.ConditionalDisagg = false
				return NewTopologyAware(c, 0.5, rng)
			})
		})
	}
}

// randomLLMD draws llm-d's plugins: a few scorers of every kind, random
// weights (some that round), either picker, and a decider threshold.
func randomLLMD(rng *rand.Rand) LLMDConfig {
	c := DefaultLLMDConfig()
	c.Scorers = nil
	for _, name := range ScorerNames() {
		if rng.IntN(2) == 0 {
			c.Scorers = append(c.Scorers, WeightedScorer{name, []float64{1, 2, 3, 0.7, 0}[rng.IntN(5)]})
		}
	}
	if len(c.Scorers) == 0 || rng.IntN(3) == 0 {
		c.Scorers = DefaultLLMDConfig().Scorers
	}
	rng.Shuffle(len(c.Scorers), func(i, j int) { c.Scorers[i], c.Scorers[j] = c.Scorers[j], c.Scorers[i] })
	if rng.IntN(5) == 0 {
		c.Picker = PickerWeightedRandom
	}
	c.NonCachedTokens = rng.IntN(3) * 32
	c.LRUCapacityPerServer = rng.IntN(3) * 4
	return c
}

func TestLLMDIndexMatchesScan(t *testing.T) {
	for _, disaggregated := range []bool{false, true} {
		t.Run(fmt.Sprintf("disaggregated=%v", disaggregated), func(t *testing.T) {
			checkIndexed(t, disaggregated, func(rng *rand.Rand) Router {
				return NewLLMD(randomLLMD(rand.New(rand.NewPCG(rng.Uint64(), 1))), rng)
			})
		})
	}
}

// TestIndexedChoicesAskFewInstances routes on 4,096 instances whose
// every prompt family is cached on eight, and counts the prefix look-ups
// a decision makes (Cluster.Overlap: a look-up in an instance's cache):
// Dynamo's and llm-d's precise scorer's indexed choices ask the instances
// that hold the prompt's first block, not every instance.
func TestIndexedChoicesAskFewInstances(t *testing.T) {
	precise := LLMDConfig{Scorers: []WeightedScorer{{ScorerQueue, 2}, {ScorerKVUtilization, 2}, {ScorerPrecisePrefix, 3}},
		Picker: PickerMaxScore}
	for name, rt := range map[string]Router{
		"dynamo": NewDynamo(DefaultDynamoConfig(), seeded()),
		"llmd":   NewLLMD(precise, seeded()),
	} {
		c, _ := choiceFleet(4096, false)
		lookups, overlap := 0, c.Overlap
		c.Overlap = func(i int, hashes []uint64) int {
			lookups++
			return overlap(i, hashes)
		}
		rt.(Indexer).Reindex(c)
		rng := rand.New(rand.NewPCG(3, 4))
		var r Request
		const decisions = 200
		for i := range llmdScansBeforeIndex + decisions {
			if i == llmdScansBeforeIndex { // llm-d scans a few decisions after a refresh
				lookups = 0
			}
			choiceMove(c, rt.Route(choiceRequest(&r, i), c), rt, rng)
		}
		if perDecision := float64(lookups) / decisions; perDecision > 2*choiceHolders {
			t.Errorf("%s: %.1f prefix look-ups a decision on 4,096 instances, want at most %d", name, perDecision,
				2*choiceHolders)
		}
	}
}
