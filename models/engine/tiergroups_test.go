package engine

import (
	"testing"

	"handoff/models/kv"
)

// Hybrid tiers on a tiny model: 4-token blocks, one sliding-window group
// of an 8-token window (cdiv(8, 4) = 2 blocks looked up, cdiv(7, 4) = 2
// loaded at a hit's end).
const (
	hyBlock  = 4
	hyWindow = 8
)

// newHybridTiered is a hybrid instance of blocks blocks (4 tokens each)
// with lower tiers.
func newHybridTiered(t *testing.T, blocks int, p Policy, tiers ...*Tier) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: 256, MaxSeqs: 8, BlockSize: hyBlock, NumBlocks: blocks, MaxModelLen: 1 << 20,
		PrefixCaching: true, Preemption: p, Tiers: tiers, SlidingWindow: hyWindow, SlidingGroups: 1}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// hashesOf are the block hashes of a prompt of n blocks made of content id.
func hashesOf(id uint64, n int) []uint64 {
	return kv.AppendBlockHashes(nil, []kv.Segment{{ID: id, Tokens: n * hyBlock}}, 0, n*hyBlock, hyBlock)
}

// evictHBM runs a sequence of other content through in, as long as its
// pool, so that HBM no longer caches an earlier prompt.
func evictHBM(t *testing.T, in *Instance, now int64) int64 {
	t.Helper()
	in.Enqueue(seq(in, 99, in.cfg.NumBlocks/2*hyBlock, 1), now) // both groups take every block
	return runToEnd(t, in, now)
}

// TestHybridOffloadWritesEveryGroupsBlocks: a finishing sequence of a
// hybrid model writes each computed block once per KV cache group, the
// full-attention entry under its hash and the sliding-window one under
// kv.GroupKey(hash, 1): (1 + groups)·n entries for n blocks.
func TestHybridOffloadWritesEveryGroupsBlocks(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 64), Offload: OffloadOnCompletion}
	in := newHybridTiered(t, 64, Recompute, host)
	in.Enqueue(shared(in, 1, 8*hyBlock, 1), 0)
	runToEnd(t, in, 0)
	if host.Blocks.Len() != 16 || in.Stats().TierWrittenBlocks[TierHost] != 16 {
		t.Fatalf("host holds %d entries, %d written; want 2·8", host.Blocks.Len(), in.Stats().TierWrittenBlocks[TierHost])
	}
	for j, h := range hashesOf(1, 8) {
		if !host.Blocks.Has(h) || !host.Blocks.Has(kv.GroupKey(h, 1)) {
			t.Errorf("block %d: full held %t, sliding held %t", j, host.Blocks.Has(h), host.Blocks.Has(kv.GroupKey(h, 1)))
		}
	}
	check(t, in)
}

// TestHybridOnboardReadsWhatVLLMLoads: a prompt of 8 blocks found on host
// after HBM dropped it hits 7 blocks (its last token is computed) and
// reads the full-attention group's 7 and the sliding-window group's
// blocks in the window at the hit's end, max(0, ⌊(28 − 8 + 1)/4⌋) = 5 and
// 6: 9 entries, 2 of them sliding. The sequence then holds those 7 + 2.
func TestHybridOnboardReadsWhatVLLMLoads(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 64), Offload: OffloadOnCompletion}
	in := newHybridTiered(t, 30, Recompute, host)
	in.Enqueue(shared(in, 1, 8*hyBlock, 1), 0)
	now := evictHBM(t, in, runToEnd(t, in, 0))
	s := shared(in, 1, 8*hyBlock, 1)
	in.Enqueue(s, now)
	if b, res := in.Schedule(now); b != nil || len(res.Onboards) != 1 {
		t.Fatalf("want an onboard, got batch %v and %d onboards", b, len(res.Onboards))
	}
	if s.Onboard[TierHost] != 9 || s.OnboardSliding[TierHost] != 2 || in.SeqBlocks(s) != 9 {
		t.Fatalf("read %d entries (%d sliding), holds %d blocks; want 9 (2), 9", s.Onboard[TierHost],
			s.OnboardSliding[TierHost], in.SeqBlocks(s))
	}
	if in.Stats().TierHitBlocks[TierHost] != 9 {
		t.Errorf("%d host entries counted read, want 9", in.Stats().TierHitBlocks[TierHost])
	}
	in.Onboarded(s, now+1)
	if b, _ := in.Schedule(now + 1); b == nil || b.PrefillTokens != hyBlock {
		t.Fatalf("after the onboard the prefill computes %v, want the last block's %d tokens", b, hyBlock)
	}
	in.Complete(now+1, now+2)
	check(t, in)
}

// TestHybridHitNeedsTheWindowBelowHBM: the full-attention group holds
// blocks 0…6 on host, the sliding-window group only 0…3: the hit ends
// where the sliding group's last run of cdiv(8, 4) = 2 blocks does, at 4,
// and reads blocks 0…3 of the full group and 2…3 of the sliding one. With
// the sliding group's block 0 alone the run from the start gives 1 block.
func TestHybridHitNeedsTheWindowBelowHBM(t *testing.T) {
	for _, c := range []struct {
		sliding, hit, read int
	}{{4, 4, 4 + 2}, {1, 1, 1 + 1}, {0, 0, 0}, {7, 7, 7 + 2}} {
		host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 64), Offload: OffloadOnCompletion}
		in := newHybridTiered(t, 30, Recompute, host)
		for j, h := range hashesOf(1, 8) {
			if j < 7 {
				host.Blocks.Put(h, 0)
			}
			if j < c.sliding {
				host.Blocks.Put(kv.GroupKey(h, 1), 0)
			}
		}
		s := shared(in, 1, 8*hyBlock, 1)
		in.Enqueue(s, 0)
		in.Schedule(0)
		if got := s.CachedTokens / hyBlock; got != c.hit || int(s.Onboard[TierHost]) != c.read {
			t.Errorf("sliding blocks 0…%d held: hit %d blocks reading %d entries, want %d reading %d", c.sliding-1,
				got, s.Onboard[TierHost], c.hit, c.read)
		}
	}
}

// TestHybridTierCapacityIsSharedByGroups: a tier's slots each hold one
// group's block, of either group: 10 slots keep the 5 leading blocks of a
// prompt whole (both entries), and the hit through them is 5 blocks.
func TestHybridTierCapacityIsSharedByGroups(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 10), Offload: OffloadOnCompletion}
	in := newHybridTiered(t, 30, Recompute, host)
	in.Enqueue(shared(in, 1, 8*hyBlock, 1), 0)
	now := evictHBM(t, in, runToEnd(t, in, 0))
	for j, h := range hashesOf(1, 8) {
		if held := host.Blocks.Has(h) && host.Blocks.Has(kv.GroupKey(h, 1)); held != (j < 5) {
			t.Errorf("block %d held by both groups: %t", j, held)
		}
	}
	s := shared(in, 1, 8*hyBlock, 1)
	in.Enqueue(s, now)
	in.Schedule(now)
	if s.CachedTokens != 5*hyBlock || s.Onboard[TierHost] != 5+2 {
		t.Errorf("hit %d tokens reading %d entries, want 20 reading 7", s.CachedTokens, s.Onboard[TierHost])
	}
}

// TestHybridSwapsIntoTheHostTier: under the swap policy a hybrid
// sequence's blocks of every group go to the host tier, room taken from
// the tier's cache, and come back.
func TestHybridSwapsIntoTheHostTier(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 40), Offload: OffloadOnCompletion}
	in := newHybridTiered(t, 20, Swap, host)
	a, b := seq(in, 1, 20, 20), seq(in, 2, 20, 20) // 40 tokens: 10 + 3 blocks alone
	in.Enqueue(a, 0)
	in.Enqueue(b, 0)
	swapped := false
	for now := int64(0); now < 200 && !swapped; now++ {
		if bt, _ := in.Schedule(now); bt != nil { // nil: a step that swapped its only sequence out
			in.Complete(now, now+1)
		}
		swapped = in.HostBlocksUsed() > 0
	}
	if !swapped {
		t.Fatal("no swap-out")
	}
	if used := in.HostBlocksUsed(); host.Blocks.Reserved() != used || a.hostBlocks+b.hostBlocks != used || used == 0 {
		t.Fatalf("host reserves %d for %d swapped blocks", host.Blocks.Reserved(), used)
	}
	for now := int64(300); !in.Idle(); now++ {
		if now > 2000 {
			t.Fatal("stuck")
		}
		if bt, _ := in.Schedule(now); bt != nil {
			in.Complete(now, now+1)
		}
	}
	if host.Blocks.Reserved() != 0 || in.Stats().SwapOuts == 0 {
		t.Errorf("host reserves %d after the run; %d swap-outs", host.Blocks.Reserved(), in.Stats().SwapOuts)
	}
	check(t, in)
}
