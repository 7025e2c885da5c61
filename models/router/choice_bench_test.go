package router

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// choiceIndexFrom is the fewest instances for which the core keeps a
// router's indexes (sim's indexFrom); below it routers scan.
const choiceIndexFrom = 64

// choiceFamilies is how many prompt families the choice benchmark's
// requests come from; each family's prefix is cached on choiceHolders
// instances.
const (
	choiceFamilies = 8
	choiceHolders  = 8
	choiceBlocks   = 64 // a request's full blocks (1,024 tokens)
)

// choiceFleet is the routing view BenchmarkRouterChoice decides from: n
// colocated instances (n/2 prefillers and n/2 decoders when
// disaggregated) in a busy fleet's state — a third idle, the rest with
// 1–32 outstanding requests, up to 4,096 active prefill tokens and 2,048
// active blocks, up to 8 waiting, KV 0–100% used — and each request
// family's leading blocks cached on a few instances (returned: blocks
// per family, by instance).
func choiceFleet(n int, disaggregated bool) (*Cluster, map[int][choiceFamilies]int) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	vs := make([]View, n)
	for i := range vs {
		vs[i] = View{Index: i, TotalBlocks: 30000, FreeBlocks: 30000, BlockSize: testBlock, MaxBatchedTokens: 2048}
		if rng.IntN(3) > 0 {
			busyView(&vs[i], rng)
		}
	}
	holds := map[int][choiceFamilies]int{}
	for f := range choiceFamilies {
		for h := range choiceHolders {
			i := (f*choiceHolders + h) * n / (choiceFamilies * choiceHolders)
			m := holds[i]
			m[f] = 4 + rng.IntN(choiceBlocks-4)
			holds[i] = m
		}
	}
	c := &Cluster{Prefill: vs, BlockSize: testBlock,
		KVBytes: func(_, tokens int) float64 { return 1000 * float64(tokens) },
		TransferNs: func(src, dst int, bytes float64) int64 {
			if src == dst {
				return 0
			}
			return int64(src%7)*1000 + int64(bytes)
		},
		Overlap: func(i int, hashes []uint64) int {
			if len(hashes) == 0 {
				return 0
			}
			return min(holds[i][hashes[0]>>32], len(hashes))
		},
		Caching: func(dst []int, hashes []uint64) []int {
			for i, m := range holds {
				if m[hashes[0]>>32] > 0 {
					dst = append(dst, i)
				}
			}
			return dst
		}}
	if disaggregated {
		c.Prefill, c.Decode = vs[:n/2], vs[n/2:]
	}
	return c, holds
}

// seedPrefixes teaches a router with its own prefix index (llm-d's) the
// prefixes choiceFleet's instances hold.
func seedPrefixes(r Router, holds map[int][choiceFamilies]int) {
	l, ok := r.(*LLMD)
	if !ok {
		return
	}
	var req Request
	for i, m := range holds {
		for f, blocks := range m {
			if blocks > 0 {
				l.index.Record(i, choiceRequest(&req, f).Hashes[:blocks], 30000)
			}
		}
	}
}

// busyView gives v a random busy instance's state.
func busyView(v *View, rng *rand.Rand) {
	v.Outstanding = 1 + rng.IntN(32)
	v.Running = v.Outstanding
	v.Waiting = rng.IntN(9)
	v.ActivePrefillTokens = 16 * rng.IntN(257)
	v.ActiveBlocks = rng.IntN(2049)
	v.FreeBlocks = rng.IntN(v.TotalBlocks + 1)
}

// choiceRequest is the i-th request: 1,024 prompt tokens of family
// i mod choiceFamilies, whose block hashes are the family's.
func choiceRequest(r *Request, i int) *Request {
	f := uint64(i % choiceFamilies)
	r.PromptTokens, r.OutputTokens = choiceBlocks*testBlock, 256
	r.Hashes = r.Hashes[:0]
	for b := range choiceBlocks {
		r.Hashes = append(r.Hashes, f<<32|uint64(b+1))
	}
	return r
}

// choiceMove is the bookkeeping a decision brings: the chosen instances
// take the request, and another instance, drawn by rng, finishes one, so
// the fleet's load stays about where it was. An Indexer is told, as the
// core tells it.
func choiceMove(c *Cluster, d Decision, rt Router, rng *rand.Rand) {
	ix, _ := rt.(Indexer)
	changed := func(decode bool, k int) {
		if ix != nil && len(c.Prefill)+len(c.Decode) >= choiceIndexFrom {
			ix.Changed(c, decode, k)
		}
	}
	take := func(vs []View, decode bool, inst int) {
		k := inst - vs[0].Index // the views are in index order, without gaps
		v := &vs[k]
		v.Outstanding++
		v.ActivePrefillTokens += choiceBlocks * testBlock
		v.ActiveBlocks += choiceBlocks
		changed(decode, k)
	}
	finish := func(vs []View, decode bool) {
		k := rng.IntN(len(vs))
		v := &vs[k]
		v.Outstanding = max(0, v.Outstanding-1)
		v.ActivePrefillTokens = max(0, v.ActivePrefillTokens-choiceBlocks*testBlock)
		v.ActiveBlocks = max(0, v.ActiveBlocks-choiceBlocks)
		changed(decode, k)
	}
	take(c.Prefill, false, d.Prefill)
	finish(c.Prefill, false)
	if len(c.Decode) > 0 && d.Decode >= 0 {
		take(c.Decode, true, d.Decode)
		finish(c.Decode, true)
	}
}

// choiceRouters are the routers BenchmarkRouterChoice times, and whether
// each decides over a disaggregated fleet.
func choiceRouters() []struct {
	name          string
	disaggregated bool
	make          func() Router
} {
	hot := DefaultDynamoConfig()
	hot.Temperature = 0.5
	return []struct {
		name          string
		disaggregated bool
		make          func() Router
	}{
		{"round_robin", false, func() Router { return &RoundRobin{} }},
		{"least_loaded", false, func() Router { return &LeastLoaded{} }},
		{"dynamo", false, func() Router { return NewDynamo(DefaultDynamoConfig(), seeded()) }},
		{"dynamo-t0.5", false, func() Router { return NewDynamo(hot, seeded()) }},
		{"llmd", false, func() Router { return NewLLMD(DefaultLLMDConfig(), seeded()) }},
		{"topology_aware", true, func() Router { return NewTopologyAware(DefaultDynamoConfig(), 1, seeded()) }},
	}
}

// BenchmarkRouterChoice is the cost of one routing decision per router at
// 16, 1,024 and 16,384 instances (the most a scenario may have): the
// decision, and the bookkeeping it brings to the views and to the
// router's indexes (Indexer), reindexed once before, from as many
// instances as the core keeps them (choiceIndexFrom). dynamo-t0.5 is
// Dynamo at temperature 0.5, whose softmax reads every worker's cost;
// topology_aware prices every (prefiller, decoder) pair of a
// disaggregated fleet (its colocated choice is Dynamo's).
func BenchmarkRouterChoice(b *testing.B) {
	for _, rt := range choiceRouters() {
		for _, n := range []int{16, 1024, 16384} {
			b.Run(fmt.Sprintf("policy=%s/instances=%d", rt.name, n), func(b *testing.B) {
				c, holds := choiceFleet(n, rt.disaggregated)
				router := rt.make()
				seedPrefixes(router, holds)
				if ix, ok := router.(Indexer); ok && n >= choiceIndexFrom {
					ix.Reindex(c)
				}
				rng := rand.New(rand.NewPCG(3, 4))
				var r Request
				i := 0
				for b.Loop() {
					c.NowNs = int64(i) * 1000
					choiceMove(c, router.Route(choiceRequest(&r, i), c), router, rng)
					i++
				}
			})
		}
	}
}
