package router

import (
	"math"
	"testing"
)

// dynamoWorkers is the fixed state the cost tests price (block 16, the
// request is 64 tokens = 4 blocks):
//
//	worker  active prefill  active blocks  outstanding  device overlap
//	0       32 tokens       10             2            4 blocks
//	1       0               0              0            0
//	2       16              4              1            2
func dynamoWorkers() (*Cluster, *Request) {
	vs := []View{
		{Index: 0, ActivePrefillTokens: 32, ActiveBlocks: 10, Outstanding: 2, MaxBatchedTokens: 100},
		{Index: 1, MaxBatchedTokens: 100},
		{Index: 2, ActivePrefillTokens: 16, ActiveBlocks: 4, Outstanding: 1, MaxBatchedTokens: 100},
	}
	return testCluster(vs, nil, map[int]int{0: 4, 2: 2}, nil), request(64)
}

func TestDynamoCosts(t *testing.T) {
	tests := []struct {
		name string
		edit func(*DynamoConfig)
		want []float64
	}{
		// prefill = max(0, (active+64)/16 − overlap); load = active blocks + 4.
		// w0: 6−4 + 14 = 16; w1: 4 + 4 = 8; w2: 5−2 + 8 = 11.
		{"defaults", func(*DynamoConfig) {}, []float64{16, 8, 11}},
		// decay 2, min active 0: w0 excess 2 blocks, decay 1/(1+2·2/4) = 1/2,
		// credit 2, 6−2 + 14 = 18; w2 excess 1, decay 1/(1+2·1/4) = 2/3,
		// credit 4/3, 5 − 4/3 + 8 = 35/3.
		{"decay", func(c *DynamoConfig) { c.OverlapScoreCreditDecay = 2 }, []float64{18, 8, 35.0 / 3}},
		// + 1 per outstanding request.
		{"request weight", func(c *DynamoConfig) { c.DecodeActiveRequestWeight = 1 }, []float64{18, 8, 12}},
		// 2·prefill + load: 2·2+14, 2·4+4, 2·3+8.
		{"scale", func(c *DynamoConfig) { c.PrefillLoadScale = 2 }, []float64{18, 12, 14}},
		// credit 3 per block: w0 max(0, 6−12) = 0, w2 max(0, 5−6) = 0.
		{"credit clamps at 0", func(c *DynamoConfig) { c.OverlapScoreCredit = 3 }, []float64{14, 8, 8}},
		// Without lower tiers (no TierOverlap) their weights change nothing.
		{"host and disk", func(c *DynamoConfig) { c.HostCacheHitWeight, c.DiskCacheHitWeight = 9, 9 }, []float64{16, 8, 11}},
		// Deprecated weight 0: scale 0 and credit 0, load only.
		{"deprecated weight 0", func(c *DynamoConfig) { c.ApplyKVOverlapScoreWeight(0) }, []float64{14, 4, 8}},
		// Deprecated weight 2 replaces the scale 5 given alongside; credit kept.
		{"deprecated weight 2", func(c *DynamoConfig) { c.PrefillLoadScale = 5; c.ApplyKVOverlapScoreWeight(2) },
			[]float64{18, 12, 14}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultDynamoConfig()
			tc.edit(&cfg)
			c, r := dynamoWorkers()
			d := NewDynamo(cfg, seeded())
			checkCosts(t, d.prefillCosts(nil, r, c, c.Prefill), tc.want)
		})
	}
}

func TestDeprecatedWeightShim(t *testing.T) {
	tests := []struct {
		w, scale, credit float64
	}{{0, 0, 0}, {0.5, 0.5, 1.5}, {2, 2, 1.5}}
	for _, tc := range tests {
		c := DefaultDynamoConfig()
		c.OverlapScoreCredit, c.PrefillLoadScale = 1.5, 7
		c.ApplyKVOverlapScoreWeight(tc.w)
		if c.PrefillLoadScale != tc.scale || c.OverlapScoreCredit != tc.credit {
			t.Errorf("weight %g: scale %g credit %g, want %g %g", tc.w, c.PrefillLoadScale, c.OverlapScoreCredit,
				tc.scale, tc.credit)
		}
	}
}

func TestDynamoRoutesToLowestCost(t *testing.T) {
	c, r := dynamoWorkers()
	if got := NewDynamo(DefaultDynamoConfig(), seeded()).Route(r, c); got != (Decision{Prefill: 1, Decode: -1, PrefillCached: 0}) {
		t.Fatalf("got %+v, want worker 1 (cost 8)", got)
	}
}

func TestDynamoTemperatureZeroBreaksTiesAtRandom(t *testing.T) {
	// Credit 3: costs 14, 8, 8; workers 1 and 2 tie.
	cfg := DefaultDynamoConfig()
	cfg.OverlapScoreCredit = 3
	d := NewDynamo(cfg, seeded())
	c, r := dynamoWorkers()
	const n = 20000
	got := frequencies(n, func() Decision { return d.Route(r, c) })
	if got[0] != 0 || math.Abs(float64(got[1])/n-0.5) > 0.02 {
		t.Fatalf("choices %v, want workers 1 and 2 about evenly and never 0", got)
	}
}

func TestDynamoSoftmaxFrequencies(t *testing.T) {
	// Defaults, T = 1: costs 16, 8, 11 normalise to 1, 0, 3/8.
	cfg := DefaultDynamoConfig()
	cfg.Temperature = 1
	d := NewDynamo(cfg, seeded())
	c, r := dynamoWorkers()
	w := []float64{math.Exp(-1), 1, math.Exp(-3.0 / 8)}
	sum := w[0] + w[1] + w[2]
	const n = 100000
	got := frequencies(n, func() Decision { return d.Route(r, c) })
	for i := range w {
		if f := float64(got[i]) / n; math.Abs(f-w[i]/sum) > 0.01 {
			t.Errorf("worker %d chosen %.4f of the time, want %.4f", i, f, w[i]/sum)
		}
	}
}

func TestDynamoQueueThresholdHolds(t *testing.T) {
	tests := []struct {
		active []int
		held   bool
	}{
		{[]int{150, 120}, true},  // both past 1 × 100
		{[]int{150, 100}, false}, // exactly at the threshold is not past it
		{[]int{0, 500}, false},
	}
	for _, tc := range tests {
		cfg := DefaultDynamoConfig()
		cfg.QueueThreshold = 1
		vs := []View{{Index: 0, ActivePrefillTokens: tc.active[0], MaxBatchedTokens: 100},
			{Index: 1, ActivePrefillTokens: tc.active[1], MaxBatchedTokens: 100}}
		got := NewDynamo(cfg, seeded()).Route(request(64), testCluster(vs, nil, nil, nil))
		if got.Held() != tc.held {
			t.Errorf("active %v: decision %+v, held want %v", tc.active, got, tc.held)
		}
	}
}

// TestDynamoDecodeLegByLoadOnly: disaggregated, Dynamo routes the prefill
// and leaves the decoder to the end of the prefill (vLLM's path), when it
// picks by load alone: decoder 10 caches the whole prompt but carries 10
// blocks, decoder 11 caches nothing and carries 5, so 11. The prefiller's
// 2 cached blocks (32 tokens) do not count as its prefill load.
func TestDynamoDecodeLegByLoadOnly(t *testing.T) {
	pre := []View{{Index: 0}}
	dec := []View{{Index: 10, ActiveBlocks: 10, ActivePrefillTokens: 0}, {Index: 11, ActiveBlocks: 5, ActivePrefillTokens: 1000}}
	c := testCluster(pre, dec, map[int]int{0: 2, 10: 4}, nil)
	d := NewDynamo(DefaultDynamoConfig(), seeded())
	if got := d.Route(request(64), c); got != (Decision{Prefill: 0, Decode: DecodeLater, PrefillCached: 32}) {
		t.Fatalf("got %+v, want prefill 0 (32 tokens cached), the decoder later", got)
	}
	if got := d.RouteDecode(request(64), c); got != 11 {
		t.Fatalf("decoder %d, want 11", got)
	}
}

// TestDynamoAssumeKVReuse: colocated with router_assume_kv_reuse, a
// worker's decode load grows only by the request's blocks no active
// request there holds: worker 0 already holds 3 of the 4 (cost 6 − 4 + 10
// + 1 = 13 instead of 16 without reuse).
func TestDynamoAssumeKVReuse(t *testing.T) {
	for _, reuse := range []bool{true, false} {
		c, r := dynamoWorkers()
		c.NewBlocks = func(i int, r *Request) int {
			if i == 0 {
				return r.PromptTokens/testBlock - 3
			}
			return r.PromptTokens / testBlock
		}
		cfg := DefaultDynamoConfig()
		cfg.AssumeKVReuse = reuse
		want := []float64{16, 8, 11}
		if reuse {
			want[0] = 13
		}
		checkCosts(t, NewDynamo(cfg, seeded()).prefillCosts(nil, r, c, c.Prefill), want)
	}
}

func TestDynamoOwnIndexLearnsFromDecisions(t *testing.T) {
	cfg := DefaultDynamoConfig()
	cfg.UseKVEvents, cfg.TTL = false, 100
	d := NewDynamo(cfg, seeded())
	vs := []View{{Index: 0}, {Index: 1}}
	c := testCluster(vs, nil, map[int]int{0: 4, 1: 4}, nil) // KV events would tie: ignored
	first := d.Route(request(64), c).Prefill
	for _, now := range []int64{1, 50, 99} {
		c.NowNs = now
		if got := d.Route(request(64), c).Prefill; got != first {
			t.Fatalf("t=%d: routed to %d, want %d (credited by its own index)", now, got, first)
		}
	}
	if d.index.Overlap(first, request(64).Hashes, 198) != 4 || d.index.Overlap(first, request(64).Hashes, 199) != 0 {
		t.Fatalf("entries last written at 99 should live until 199 (ttl 100)")
	}
}

func TestConditionalDisaggBoundaries(t *testing.T) {
	tests := []struct {
		name            string
		prompt, overlap int // overlap in blocks on the decoder
		edit            func(*DynamoConfig)
		prefillActive   int
		local           bool
	}{
		{"eff 2047 ratio .5", 4095, 128, nil, 0, true},
		{"eff 2048 ratio .5", 4096, 128, nil, 0, false},
		{"ratio exactly .7", 1600, 30, nil, 0, false}, // eff 1120 = 0.7 × 1600
		{"ratio .69", 1600, 31, nil, 0, true},         // eff 1104
		{"short uncached prompt", 100, 0, nil, 0, false},
		// token_cap (earlier Dynamo): local iff uncached ≤ the cap, whatever the ratio.
		{"token cap, 5000 uncached", 5000, 0, func(c *DynamoConfig) { c.ConditionalPolicy = ConditionalTokenCap }, 0, true},
		{"token cap, 5001 uncached", 5001, 0, func(c *DynamoConfig) { c.ConditionalPolicy = ConditionalTokenCap }, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultDynamoConfig()
			cfg.ConditionalDisagg = true
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			c := testCluster([]View{{Index: 0, ActivePrefillTokens: tc.prefillActive}}, []View{{Index: 1}},
				map[int]int{1: tc.overlap}, nil)
			got := NewDynamo(cfg, seeded()).Route(request(tc.prompt), c)
			want := Decision{Prefill: 0, Decode: DecodeLater, PrefillCached: 0}
			if tc.local {
				want = Decision{Prefill: 1, Decode: -1, PrefillCached: min(tc.prompt, tc.overlap*testBlock)}
			}
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}
