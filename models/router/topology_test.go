package router

import "testing"

// topologyCluster: prefiller 0 is near the decoder but busy, prefiller 1
// idle but 5 ms away. Request 64 tokens = 4 blocks, 64000 bytes = 64 µs at
// 1 byte/ns.
//
//	prefill cost p0 = (32+64)/16 + 4 = 10, p1 = 64/16 + 4 = 8; decode d2 = 4
//	pair (0, 2) = 10 + 4 + 0.064 ms·b = 14.064 at b = 1 block/ms
//	pair (1, 2) =  8 + 4 + 5.064 ms·b = 17.064
func topologyCluster(decoderOverlap int) *Cluster {
	pre := []View{{Index: 0, ActivePrefillTokens: 32}, {Index: 1}}
	return testCluster(pre, []View{{Index: 2}}, map[int]int{2: decoderOverlap}, map[int]int64{0: 0, 1: 5e6})
}

func TestTopologyAwarePairCosts(t *testing.T) {
	tp := NewTopologyAware(DefaultDynamoConfig(), 1, seeded())
	tp.pairCosts(request(64), topologyCluster(0))
	checkCosts(t, tp.pairs, []float64{14.064, 17.064})
	// The decoder caches 2 of the 4 blocks: 32 tokens move, 32 µs.
	tp.pairCosts(request(64), topologyCluster(2))
	checkCosts(t, tp.pairs, []float64{14.032, 17.032})
}

func TestTopologyAwarePaysForDistance(t *testing.T) {
	tests := []struct {
		blocksPerMs float64
		want        Decision
	}{
		{1, Decision{Prefill: 0, Decode: 2, PrefillCached: 0}}, // 14.064 < 17.064
		{0, Decision{Prefill: 1, Decode: 2, PrefillCached: 0}}, // no network term: Dynamo's choice, 14 > 12
		// Break-even at 14 + 0.064·b = 12 + 5.064·b, b = 0.4.
		{0.5, Decision{Prefill: 0, Decode: 2, PrefillCached: 0}}, // 14.032 vs 14.532
		{0.3, Decision{Prefill: 1, Decode: 2, PrefillCached: 0}}, // 14.0192 vs 13.5192
	}
	for _, tc := range tests {
		got := NewTopologyAware(DefaultDynamoConfig(), tc.blocksPerMs, seeded()).Route(request(64), topologyCluster(0))
		if got != tc.want {
			t.Errorf("%g blocks/ms: got %+v, want %+v", tc.blocksPerMs, got, tc.want)
		}
	}
	d := NewDynamo(DefaultDynamoConfig(), seeded())
	if got := d.Route(request(64), topologyCluster(0)); got != (Decision{Prefill: 1, Decode: DecodeLater, PrefillCached: 0}) {
		t.Errorf("dynamo: got %+v, want the idle far prefiller, the decoder later", got)
	}
	if got := d.RouteDecode(request(64), topologyCluster(0)); got != 2 {
		t.Errorf("dynamo: decoder %d, want 2", got)
	}
}

func TestTopologyAwareColocatedIsDynamo(t *testing.T) {
	c, r := dynamoWorkers()
	tp := NewTopologyAware(DefaultDynamoConfig(), 1, seeded())
	if got := tp.Route(r, c); got != (Decision{Prefill: 1, Decode: -1, PrefillCached: 0}) {
		t.Fatalf("got %+v, want Dynamo's worker 1", got)
	}
}
