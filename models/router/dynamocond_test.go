package router

import "testing"

// TestDynamoSharedCacheMultiplier: the shared store's run is credited by
// shared_cache_multiplier, apart from the disk. On dynamoWorkers, with
// worker 1 holding 2 host, 1 disk and 1 store block past its (zero)
// device overlap: prefill max(0, 4 − 0.75·2 − 0.25·1 − m·1) + load 4.
func TestDynamoSharedCacheMultiplier(t *testing.T) {
	for _, tc := range []struct {
		m, want1 float64
	}{{0, 4 - 1.5 - 0.25 + 4}, {0.5, 4 - 1.5 - 0.25 - 0.5 + 4}, {1, 4 - 1.5 - 0.25 - 1 + 4}} {
		cfg := DefaultDynamoConfig()
		cfg.SharedCacheMultiplier = tc.m
		c, r := dynamoWorkers()
		c.TierOverlap = func(i int, _ []uint64, _ int) TierBlocks {
			if i == 1 {
				return TierBlocks{2, 1, 1}
			}
			return TierBlocks{}
		}
		checkCosts(t, NewDynamo(cfg, seeded()).prefillCosts(nil, r, c, c.Prefill), []float64{16, tc.want1, 11})
	}
}

// peekFleet: one prefiller; decoder 10 caches the whole 64-token prompt
// (4 blocks) but has 1600 tokens of prefill in flight, decoder 11 caches
// nothing and decodes 10 blocks. The full cost: 10 costs (1600+64)/16 − 4
// + 4 = 104, 11 costs 4 + 14 = 18. The decode cost: 10 costs max(0, 4 −
// 4) = 0, 11 costs 14.
func peekFleet() *Cluster {
	dec := []View{{Index: 10, ActivePrefillTokens: 1600}, {Index: 11, ActiveBlocks: 10}}
	return testCluster([]View{{Index: 0}}, dec, map[int]int{10: 4}, nil)
}

func TestDynamoConditionalPeekCost(t *testing.T) {
	for _, tc := range []struct {
		cost string
		want Decision
	}{
		{PeekDecode, Decision{Prefill: 10, Decode: -1, PrefillCached: 64}},      // 10 is peeked, eff 0: local
		{PeekFull, Decision{Prefill: 0, Decode: DecodeLater, PrefillCached: 0}}, // 11 is peeked, eff 64 of 64: remote
	} {
		cfg := DefaultDynamoConfig()
		cfg.ConditionalDisagg, cfg.ConditionalPeekCost = true, tc.cost
		d := NewDynamo(cfg, seeded())
		c := peekFleet()
		if got := d.Route(request(64), c); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.cost, got, tc.want)
		}
		d.costs, d.overlaps = d.costs[:0], d.overlaps[:0]
		for i := range c.Decode {
			d.costs = append(d.costs, d.decodeLogit(request(64), c, &c.Decode[i], []int{4, 0}[i]))
		}
		checkCosts(t, d.costs, []float64{0, 14})
	}
}

// busyFleet: prefillers with a token budget of 100; prefiller 0 has 150
// active tokens and caches the 64-token prompt (cost (150+64)/16 − 4 + 4 =
// 13.375), prefiller 1 has 90 and caches nothing (154/16 + 4 = 13.625), so
// Dynamo picks 0, which is past 1 × its budget. The decoder, with 100 KV
// blocks and 80 decoding, caches overlap blocks.
func busyFleet(overlap int) *Cluster {
	pre := []View{{Index: 0, ActivePrefillTokens: 150, MaxBatchedTokens: 100},
		{Index: 1, ActivePrefillTokens: 90, MaxBatchedTokens: 100}}
	dec := []View{{Index: 10, ActiveBlocks: 80, TotalBlocks: 100}}
	return testCluster(pre, dec, map[int]int{0: 4, 10: overlap}, nil)
}

func TestDynamoConditionalBusySignals(t *testing.T) {
	tests := []struct {
		name    string
		overlap int // decoder's cached blocks of the 4
		edit    func(*DynamoConfig)
		local   bool
	}{
		{"isl_bounding ignores a busy prefiller", 0, func(c *DynamoConfig) { c.PrefillBusyThreshold = ptr(1.0) }, false},
		{"prefill_load, chosen prefiller busy", 0, func(c *DynamoConfig) {
			c.ConditionalPolicy, c.PrefillBusyThreshold = ConditionalPrefillLoad, ptr(1.0)
		}, true},
		{"prefill_load, 150 ≤ 1.5 × 100", 0, func(c *DynamoConfig) {
			c.ConditionalPolicy, c.PrefillBusyThreshold = ConditionalPrefillLoad, ptr(1.5)
		}, false},
		{"prefill_load, router_queue_threshold's line", 0, func(c *DynamoConfig) {
			c.ConditionalPolicy, c.QueueThreshold = ConditionalPrefillLoad, 1
		}, true},
		{"prefill_load, no line", 0, func(c *DynamoConfig) { c.ConditionalPolicy = ConditionalPrefillLoad }, false},
		{"isl_or_load, cached", 3, func(c *DynamoConfig) { c.ConditionalPolicy = ConditionalISLOrLoad }, true},
		{"isl_or_load, busy", 0, func(c *DynamoConfig) {
			c.ConditionalPolicy, c.PrefillBusyThreshold = ConditionalISLOrLoad, ptr(1.0)
		}, true},
		{"isl_or_load, neither", 0, func(c *DynamoConfig) { c.ConditionalPolicy = ConditionalISLOrLoad }, false},
		// 80 + 4 blocks against 100 KV blocks.
		{"decoder busy: 84 > 0.8 × 100", 3, func(c *DynamoConfig) { c.DecodeBusyThreshold = ptr(0.8) }, false},
		{"decoder not busy: 84 ≤ 0.84 × 100", 3, func(c *DynamoConfig) { c.DecodeBusyThreshold = ptr(0.84) }, true},
		{"token cap, decoder busy", 0, func(c *DynamoConfig) {
			c.ConditionalPolicy, c.DecodeBusyThreshold = ConditionalTokenCap, ptr(0.5)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultDynamoConfig()
			cfg.ConditionalDisagg = true
			tc.edit(&cfg)
			got := NewDynamo(cfg, seeded()).Route(request(64), busyFleet(tc.overlap))
			want := Decision{Prefill: 0, Decode: DecodeLater, PrefillCached: 64}
			if tc.local {
				want = Decision{Prefill: 10, Decode: -1, PrefillCached: tc.overlap * testBlock}
			}
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestDynamoQueuePolicies: within a priority tier fcfs keeps the order
// held, lcfs puts the later arrival first, wspt the shorter prompt; a
// lower class priority comes first under each.
func TestDynamoQueuePolicies(t *testing.T) {
	early := &Request{ID: 1, PromptTokens: 900}
	late := &Request{ID: 2, PromptTokens: 100}
	urgent := &Request{ID: 3, PromptTokens: 5000, Priority: -1}
	for _, tc := range []struct {
		policy string
		tie    bool
	}{{QueueFCFS, true}, {QueueLCFS, false}, {QueueWSPT, false}} {
		cfg := DefaultDynamoConfig()
		cfg.QueuePolicy = tc.policy
		d := NewDynamo(cfg, seeded())
		e, l, u := d.QueueKey(early), d.QueueKey(late), d.QueueKey(urgent)
		if tc.tie != (e == l) || (!tc.tie && !(l < e)) || !(u < l && u < e) {
			t.Errorf("%s: keys early %d late %d urgent %d", tc.policy, e, l, u)
		}
	}
}
