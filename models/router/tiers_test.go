package router

import "testing"

// withTiers gives a test cluster lower tiers: runs[i] is what instance i
// holds past its device overlap, which the walk must start from.
func withTiers(t *testing.T, c *Cluster, runs map[int]TierBlocks, onboardNs map[int]int64) *Cluster {
	c.TierOverlap = func(i int, hashes []uint64, from int) TierBlocks {
		if want := c.Overlap(i, hashes); from != want {
			t.Errorf("instance %d: the tier walk starts at block %d, not past its device overlap %d", i, from, want)
		}
		return runs[i]
	}
	c.OnboardNs = func(i int, _ TierBlocks) int64 { return onboardNs[i] }
	return c
}

// TestDynamoCreditsHostAndDiskTiers checks Dynamo's cost by hand with
// lower-tier overlaps (dynamoWorkers: 4-block request, block 16):
//
//	credit = device + 0.75·host + 0.25·disk + 0·store (shared_cache_multiplier)
//	w0: device 4, nothing below: 6 − 4 + 14 = 16
//	w1: host 2, disk 1, store 1: credit 1.5 + 0.25 = 1.75; 4 − 1.75 + 4 = 6.25
//	w2: device 2, host 2: credit 2 + 1.5 = 3.5; 5 − 3.5 + 8 = 9.5
//
// and with host 1, disk 0.5: w1 credit 2 + 0.5 = 2.5: 1.5 + 4 = 5.5; w2
// credit 2 + 2 = 4: 1 + 8 = 9.
func TestDynamoCreditsHostAndDiskTiers(t *testing.T) {
	runs := map[int]TierBlocks{1: {2, 1, 1}, 2: {2, 0, 0}}
	for _, tc := range []struct {
		host, disk float64
		want       []float64
	}{{0.75, 0.25, []float64{16, 6.25, 9.5}}, {1, 0.5, []float64{16, 5.5, 9}}, {0, 0, []float64{16, 8, 11}}} {
		cfg := DefaultDynamoConfig()
		cfg.HostCacheHitWeight, cfg.DiskCacheHitWeight = tc.host, tc.disk
		c, r := dynamoWorkers()
		withTiers(t, c, runs, nil)
		checkCosts(t, NewDynamo(cfg, seeded()).prefillCosts(nil, r, c, c.Prefill), tc.want)
	}
	// Without KV events the router knows no tier: its own index predicts
	// device overlaps only.
	cfg := DefaultDynamoConfig()
	cfg.UseKVEvents = false
	c, r := dynamoWorkers()
	withTiers(t, c, runs, nil)
	c.TierOverlap = func(int, []uint64, int) TierBlocks { t.Fatal("tiers asked without KV events"); return TierBlocks{} }
	NewDynamo(cfg, seeded()).prefillCosts(nil, r, c, c.Prefill)
}

// TestLLMDPreciseScorerWeighsTheMedium: the precise prefix scorer counts
// the device run at the gpu weight and the tiers' runs at theirs, over
// the request's blocks (8): 20 holds 2 on device and 4 on host
// (2 + 0.8·4 = 5.2 → 0.65); 21 nothing; 22 all 8 on device (1).
func TestLLMDPreciseScorerWeighsTheMedium(t *testing.T) {
	l := NewLLMD(DefaultLLMDConfig(), seeded())
	c := withTiers(t, testCluster(nil, nil, map[int]int{20: 2, 22: 8}, nil), map[int]TierBlocks{20: {4, 0, 0}}, nil)
	checkCosts(t, l.Score(nil, ScorerPrecisePrefix, request(128), c, llmdViews()), []float64{0.65, 0, 1})
	cfg := DefaultLLMDConfig()
	cfg.MediumWeights = &MediumWeights{CPU: ptr(0.5)}
	l = NewLLMD(cfg, seeded())
	checkCosts(t, l.Score(nil, ScorerPrecisePrefix, request(128), c, llmdViews()), []float64{0.5, 0, 1})
}

// TestTopologyAwarePricesAStoreOnboardAgainstATransfer: a decoder whose
// store holds the prompt pays the store read instead of moving the prompt
// from the prefiller, and the longer of the two prices the pair.
func TestTopologyAwarePricesAStoreOnboardAgainstATransfer(t *testing.T) {
	pre := []View{{Index: 0, MaxBatchedTokens: 100}}
	dec := []View{{Index: 1, MaxBatchedTokens: 100}, {Index: 2, MaxBatchedTokens: 100}}
	// 64 tokens, 4 blocks; transfers cost 1 ns per byte, 1000 bytes a token.
	c := withTiers(t, testCluster(pre, dec, nil, nil), map[int]TierBlocks{1: {0, 0, 4}}, map[int]int64{1: 5e6})
	tr := NewTopologyAware(DefaultDynamoConfig(), 1, seeded())
	tr.pairCosts(request(64), c)
	// Decoder 1 reads the 4 blocks from the store in 5 ms and pulls nothing:
	// 5 blocks of network cost. Decoder 2 pulls 64 000 bytes: 0.064 ms.
	if got := tr.pairs[0] - tr.pre[0] - tr.dec[0]; !near(got, 5) {
		t.Errorf("decoder 1's network term = %g blocks, want 5 (the store read)", got)
	}
	if got := tr.pairs[1] - tr.pre[0] - tr.dec[1]; !near(got, 0.064) {
		t.Errorf("decoder 2's network term = %g blocks, want 0.064 (the transfer)", got)
	}
}
