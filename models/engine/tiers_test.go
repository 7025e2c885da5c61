package engine

import (
	"strings"
	"testing"

	"handoff/models/kv"
)

// newTiered is newInst with lower tiers.
func newTiered(t *testing.T, blocks int, p Policy, tiers ...*Tier) *Instance {
	t.Helper()
	cfg := Config{MaxBatchedTokens: 4096, MaxSeqs: 8, BlockSize: 16, NumBlocks: blocks,
		MaxModelLen: 1 << 20, PrefixCaching: true, Preemption: p, Tiers: tiers}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// shared returns a sequence whose whole prompt is the shareable content id.
func shared(in *Instance, id uint64, prompt, out int) *Seq {
	s := seq(in, id, prompt, out)
	s.Prefix = []kv.Segment{{ID: id, Tokens: prompt}}
	return s
}

// runToEnd steps the instance until it is idle, completing step k at k.
func runToEnd(t *testing.T, in *Instance, from int64) int64 {
	t.Helper()
	for now := from; ; now++ {
		b, res := in.Schedule(now)
		if len(res.Onboards) > 0 {
			t.Fatalf("an unexpected onboard at %d", now)
		}
		if b == nil {
			if !in.Idle() {
				t.Fatalf("stuck at %d", now)
			}
			return now
		}
		in.Complete(now, now+1)
	}
}

// TestEvictedFromHBMButOnHostIsAHostHit: a prompt written to the host
// tier when its sequence finished, then evicted from HBM, is found on
// host: the next sequence with that prefix copies its blocks up
// (Onboards) instead of recomputing them, then computes only the rest.
func TestEvictedFromHBMButOnHostIsAHostHit(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 64), Offload: OffloadOnCompletion, WriteNsPerBlock: 10}
	in := newTiered(t, 10, Recompute, host)
	in.Enqueue(shared(in, 1, 128, 1), 0) // 8 blocks, written to host as it finishes
	now := runToEnd(t, in, 0)
	if host.Blocks.Len() != 8 || in.Stats().TierWrittenBlocks[TierHost] != 8 {
		t.Fatalf("host holds %d blocks after the first sequence, want 8", host.Blocks.Len())
	}
	in.Enqueue(seq(in, 2, 150, 1), now) // 10 blocks of other content evict it from HBM
	now = runToEnd(t, in, now)
	if in.Pool().CachedBlocks() > 2 {
		t.Fatalf("HBM still caches %d blocks", in.Pool().CachedBlocks())
	}
	s := shared(in, 1, 128, 1)
	in.Enqueue(s, now)
	b, res := in.Schedule(now)
	if b != nil || len(res.Onboards) != 1 || s.Onboard[TierHost] != 7 {
		t.Fatalf("want an onboard of 7 host blocks (the last token is computed), got batch %v, onboards %d, %v",
			b, len(res.Onboards), s.Onboard)
	}
	if s.OnboardReadyNs != 71 { // the 7th of eight 10 ns writes queued from its finish at 1
		t.Errorf("ready at %d, want 71", s.OnboardReadyNs)
	}
	in.Onboarded(s, now+5)
	b, _ = in.Schedule(now + 5)
	if b == nil || b.PrefillTokens != 128-7*16 {
		t.Fatalf("after onboarding the prefill computes %v tokens, want %d", b, 128-7*16)
	}
	if s.CachedTokens != 7*16 || s.OnboardNs != 5 || in.Stats().TierHitBlocks[TierHost] != 7 {
		t.Errorf("cached %d, onboard %d ns, host hits %d", s.CachedTokens, s.OnboardNs, in.Stats().TierHitBlocks[TierHost])
	}
	in.Complete(now+5, now+6)
	check(t, in)
}

// TestWriteBackTakesOnlyEvictedBlocks: a host tier that takes blocks on
// eviction holds nothing while HBM keeps them, and a block HBM evicts;
// a full host sends its own evictions to a disk below that writes back.
func TestWriteBackTakesOnlyEvictedBlocks(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 4), Offload: OffloadOnEviction}
	disk := &Tier{Kind: TierDisk, Blocks: kv.NewTier("disk", 64), Offload: OffloadOnEviction}
	in := newTiered(t, 10, Recompute, host, disk)
	in.Enqueue(shared(in, 1, 128, 1), 0)
	now := runToEnd(t, in, 0)
	if host.Blocks.Len() != 0 {
		t.Fatalf("a write-back host holds %d blocks HBM still has", host.Blocks.Len())
	}
	in.Enqueue(seq(in, 2, 150, 1), now)
	runToEnd(t, in, now)
	if host.Blocks.Len() != 4 || disk.Blocks.Len() != 4 {
		t.Fatalf("host %d, disk %d blocks; want 4 and 4 of the 8 HBM evicted", host.Blocks.Len(), disk.Blocks.Len())
	}
	if err := host.Blocks.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestSwapAndOffloadShareTheHostTier: a swapped-out sequence takes its
// room in the host tier from the cached blocks there, and gives it back.
func TestSwapAndOffloadShareTheHostTier(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 6), Offload: OffloadOnCompletion}
	in := newTiered(t, 6, Swap, host)
	for h := uint64(1); h <= 6; h++ {
		host.Blocks.Put(100+h, 0)
	}
	a, b := seq(in, 1, 40, 50), seq(in, 2, 40, 50) // 3 blocks each, growing
	in.Enqueue(a, 0)
	in.Enqueue(b, 0)
	swapped := false
	for now := int64(0); now < 200 && !swapped; now++ {
		if bt, _ := in.Schedule(now); bt == nil {
			t.Fatal("nothing to run")
		}
		in.Complete(now, now+1)
		swapped = in.HostBlocksUsed() > 0
	}
	if !swapped {
		t.Fatal("no swap-out")
	}
	used := in.HostBlocksUsed()
	if host.Blocks.Reserved() != used || host.Blocks.Len()+used > 6 {
		t.Fatalf("host: %d reserved for %d swapped, %d cached, capacity 6", host.Blocks.Reserved(), used,
			host.Blocks.Len())
	}
	runToEnd(t, in, 300)
	if host.Blocks.Reserved() != 0 || in.HostBlocksUsed() != 0 {
		t.Errorf("host still reserves %d after the run", host.Blocks.Reserved())
	}
	check(t, in)
}

// TestTiersAreRefusedOutOfOrder: the tiers run host → disk → store, need
// prefix caching and cannot sit beside a separate swap space; a hybrid
// model's need one taking blocks on completion.
func TestTiersAreRefusedOutOfOrder(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 4), Offload: OffloadOnCompletion}
	disk := &Tier{Kind: TierDisk, Blocks: kv.NewTier("disk", 4), Offload: OffloadOnCompletion}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Tiers: []*Tier{disk, host}, PrefixCaching: true}, "host after disk"},
		{Config{Tiers: []*Tier{host}}, "need prefix caching"},
		{Config{Tiers: []*Tier{host}, PrefixCaching: true, HostBlocks: 8}, "one capacity"},
		{Config{Tiers: []*Tier{{Kind: TierHost, Blocks: kv.NewTier("h", 1)}}, PrefixCaching: true}, "offload must be"},
		{Config{Tiers: []*Tier{{Kind: TierHost, Blocks: kv.NewTier("h", 1), Offload: OffloadOnEviction}},
			PrefixCaching: true, SlidingWindow: 8, SlidingGroups: 1}, "one that takes blocks on completion"},
	} {
		c.cfg.MaxBatchedTokens, c.cfg.MaxSeqs, c.cfg.NumBlocks, c.cfg.MaxModelLen = 64, 4, 8, 1024
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.want, err, c.want)
		}
	}
}

// TestLookUpKeepsAnHBMServedPrefixInTheTier: a prefix HBM serves is
// touched in the host tier at every look-up (vLLM's _touch), so when the
// full tier makes room it drops the prefix nobody asked for since.
func TestLookUpKeepsAnHBMServedPrefixInTheTier(t *testing.T) {
	host := &Tier{Kind: TierHost, Blocks: kv.NewTier("host", 16), Offload: OffloadOnCompletion}
	in := newTiered(t, 64, Recompute, host)
	now := int64(0)
	for _, id := range []uint64{1, 2, 1, 3} { // 1 again: an HBM hit; 3 evicts 8 entries
		in.Enqueue(shared(in, id, 128, 1), now)
		now = runToEnd(t, in, now)
	}
	one := kv.AppendBlockHashes(nil, []kv.Segment{{ID: 1, Tokens: 128}}, 0, 128, 16)
	two := kv.AppendBlockHashes(nil, []kv.Segment{{ID: 2, Tokens: 128}}, 0, 128, 16)
	if host.Blocks.Match(one) != 8 || host.Blocks.Match(two) != 0 {
		t.Errorf("host holds %d blocks of the prefix HBM served, %d of the idle one; want 8 and 0",
			host.Blocks.Match(one), host.Blocks.Match(two))
	}
}
