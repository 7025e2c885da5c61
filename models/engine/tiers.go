package engine

import (
	"fmt"
	"slices"

	"handoff/models/kv"
)

// Lower KV tiers: host DRAM, a local disk, a shared store.
//
// A paged instance may keep copies of full KV blocks below HBM, each tier
// a kv.Tier of block hashes with its own LRU order. Blocks are written
// down a tier when a sequence finishes (write-through: vLLM's
// OffloadingConnector stores a request's blocks as they are computed,
// LMCache stores every chunk it computes, Dynamo's KVBM offloads blocks to
// host as they are registered), when the tier above drops them
// (write-back: SGLang HiCache's write_back policy), or both. A write lands
// after the tier's write queue drains to it; a block can be read from
// then.
//
// At admission a sequence's prefix is looked up in HBM first, then block
// by block in the tiers in order; the leading run found below HBM is
// copied up before its prefill goes on: the sequence takes blocks for it,
// leaves the queue, and waits (in the pulling state, as vLLM's requests
// wait in WAITING_FOR_REMOTE_KVS for a connector's asynchronous load)
// until the caller has timed the copies (StepResult.Onboards) and calls
// Onboarded. A decode-role sequence reads what its tiers hold of its
// prompt the same way, with its pull from the prefiller.
//
// The swap policy's host tier is the host Tier when there is one: a
// swapped-out sequence reserves room in it, evicting cached blocks, so
// swap and offload share one capacity.

// TierKind is a lower tier's place in the hierarchy, HBM → host → disk →
// store.
type TierKind uint8

// The lower tiers, in order.
const (
	TierHost  TierKind = iota // host DRAM over PCIe
	TierDisk                  // a local NVMe drive
	TierStore                 // a store shared over the network (Mooncake Store, LMCache remote)
	NumTiers
)

// String names the tier as scenarios do.
func (k TierKind) String() string { return [...]string{"host", "disk", "store"}[k] }

// Offload says when blocks are written to a tier, as a set of bits.
type Offload uint8

// The offload modes.
const (
	OffloadOnCompletion Offload = 1 << iota // a finishing sequence's full blocks (write-through)
	OffloadOnEviction                       // blocks dropped by the tier above (write-back)
)

// Tier is one lower tier as the instances using it see it. Host and disk
// tiers belong to one instance; a shared store is one *Tier that the
// configurations of every instance reaching it point to, so its contents
// and its write queue are shared (the simulator is single-threaded).
type Tier struct {
	Kind            TierKind
	Blocks          *kv.Tier
	Offload         Offload
	WriteNsPerBlock float64 // time to write one block at the tier's write bandwidth
	WriteLatencyNs  int64   // from the end of a block's write to when it can be read

	// How the caller times reads (onboards): BlockBytes per block over a
	// link of ReadBps bytes per second, after ReadLatencyNs. The engine
	// does not read them.
	BlockBytes    float64
	ReadBps       float64
	ReadLatencyNs int64

	writeFreeNs float64 // when the write queue is empty
}

// write queues the writes of blocks blocks at nowNs and returns when the
// last lands (when every write queued so far lands, for blocks = 0).
func (t *Tier) write(blocks int, nowNs int64) int64 {
	t.writeFreeNs = max(t.writeFreeNs, float64(nowNs)) + float64(blocks)*t.WriteNsPerBlock
	return int64(t.writeFreeNs+0.5) + t.WriteLatencyNs
}

// validateTiers checks the tiers' order and values.
func (c *Config) validateTiers() error {
	for i, t := range c.Tiers {
		switch {
		case t == nil || t.Blocks == nil:
			return fmt.Errorf("KV tier %d has no blocks", i)
		case t.Kind >= NumTiers:
			return fmt.Errorf("KV tier %d has an unknown kind %d", i, t.Kind)
		case i > 0 && t.Kind <= c.Tiers[i-1].Kind:
			return fmt.Errorf("KV tiers must run HBM → host → disk → store: %s after %s", t.Kind, c.Tiers[i-1].Kind)
		case t.Offload == 0 || t.Offload > OffloadOnCompletion|OffloadOnEviction:
			return fmt.Errorf("KV tier %s: offload must be on completion, on eviction or both", t.Kind)
		case !(t.WriteNsPerBlock >= 0) || t.WriteLatencyNs < 0 || t.ReadLatencyNs < 0 || !(t.BlockBytes >= 0):
			return fmt.Errorf("KV tier %s: block size and write and read times must not be negative", t.Kind)
		}
	}
	switch {
	case len(c.Tiers) > 0 && !c.PrefixCaching:
		return fmt.Errorf("KV tiers need prefix caching: blocks are found by their prefix hashes")
	case len(c.Tiers) > 0 && c.slotMode():
		return fmt.Errorf("KV tiers need a paged pool")
	case c.SlidingGroups > 0 && len(c.Tiers) > 0 && !slices.ContainsFunc(c.Tiers, writesOnCompletion):
		return fmt.Errorf("KV tiers of a hybrid model need one that takes blocks on completion: " +
			"HBM's evictions carry no sliding-window blocks")
	case c.hostTier() != nil && c.HostBlocks > 0:
		return fmt.Errorf("swap space and a host KV tier are one capacity: give only the tier's")
	}
	return nil
}

// writesOnCompletion reports whether t takes a finishing sequence's blocks.
func writesOnCompletion(t *Tier) bool { return t.Offload&OffloadOnCompletion != 0 }

// hostTier is the instance's host tier, or nil.
func (c *Config) hostTier() *Tier {
	if len(c.Tiers) > 0 && c.Tiers[0].Kind == TierHost {
		return c.Tiers[0]
	}
	return nil
}

// lowerMatch counts the leading blocks of s's shareable prompt from block
// from on that the lower tiers hold, for a hybrid model those whose
// sliding-window groups hold their window too (slidingHit), and counts
// into s.Onboard, by the first tier holding each, the entries their
// onboard reads (countOnboard); s.OnboardReadyNs is when the last can be
// read. Cost O(blocks found × groups × tiers).
func (in *Instance) lowerMatch(s *Seq, from int) int {
	s.Onboard, s.OnboardSliding = [NumTiers]int32{}, [NumTiers]int16{}
	s.OnboardReadyNs = 0
	if len(in.cfg.Tiers) == 0 {
		return 0
	}
	end := min(s.shared, (s.Tokens()-1)/in.cfg.BlockSize)
	j := from
	for j < end && in.lowerHeld(s.hashes[j]) {
		j++
	}
	j = in.slidingHit(s, from, j)
	in.countOnboard(s, from, j)
	in.touchPrompt(s, j)
	return j - from
}

// touchPrompt makes the tier entries of s's shareable prompt the most
// recently used, leading blocks last, as vLLM's connector touches a
// request's keys at every look-up (OffloadingConnectorScheduler._touch):
// every full-attention block, and a sliding-window group's from the
// window before the hit's end (block end) on. A prefix HBM keeps serving
// so stays in the tiers too. Cost O(blocks × groups × tiers).
func (in *Instance) touchPrompt(s *Seq, end int) {
	n := min(s.shared, len(s.hashes))
	want := (in.cfg.SlidingWindow + in.cfg.BlockSize - 1) / in.cfg.BlockSize
	for j := n - 1; j >= 0; j-- {
		for g := in.cfg.SlidingGroups; g >= 1 && j >= end-want; g-- {
			in.touchOnly(groupKey(s, j, g))
		}
		in.touchOnly(s.hashes[j])
	}
}

// touchOnly makes the entry of key k the most recently used in every
// tier holding it.
func (in *Instance) touchOnly(k uint64) {
	for _, t := range in.cfg.Tiers {
		t.Blocks.TouchOne(k)
	}
}

// lowerHolder is the first tier holding the block of hash h, and when it
// can be read there.
func (in *Instance) lowerHolder(h uint64) (*Tier, int64) {
	for _, t := range in.cfg.Tiers {
		if ready, ok := t.Blocks.Lookup(h); ok {
			return t, ready
		}
	}
	return nil, 0
}

// touchLower makes the lower-tier entries s reads for blocks
// from…from+n−1 the most recently used in the tiers they are read from,
// and counts them.
func (in *Instance) touchLower(s *Seq, from, n int) {
	for k := from + n - 1; k >= from; k-- { // tail first, as writeTo
		in.touchEntry(s.hashes[k])
	}
	in.touchSliding(s, from, from+n)
}

// startOnboard moves the waiting head s, which holds blocks for its hit
// and for the lower tiers' onboard blocks past it, to the pulling state
// and hands it to the caller to time the copies.
func (in *Instance) startOnboard(s *Seq, onboard int) {
	s.account(in.clockNs, in.clockNs) // its wait so far was queueing (or recovery)
	in.leaveQueue(s)
	in.waiting.popFront()
	if in.cfg.SharedQueue {
		in.skipped.pushBack(s)
	}
	s.onboarding = int32(onboard)
	s.state = statePulling
	in.pulling++
	in.res.Onboards = append(in.res.Onboards, s)
}

// Onboarding reports whether s waits for its copies from the lower tiers.
func (s *Seq) Onboarding() bool { return s.onboarding > 0 }

// Onboarded marks a sequence's copies from the lower tiers as done: its
// onboarded blocks count as computed, it joins the ready queue, and the
// time since it began waiting for them is its OnboardNs.
func (in *Instance) Onboarded(s *Seq, nowNs int64) {
	if s.state != statePulling || s.onboarding == 0 {
		panic("engine: onboarded a sequence that is not onboarding")
	}
	in.pulling--
	s.OnboardNs += nowNs - s.markNs
	s.markNs = nowNs
	s.computed = (s.committed + int(s.onboarding)) * in.cfg.BlockSize
	s.onboarding = 0
	in.commitFull(s)
	in.readyUp(s)
	in.joinQueue(s, nowNs)
}

// offloadFinished writes a finishing sequence's full shareable blocks
// that it computed — past the prefix it found cached — to the tiers that
// take blocks on completion, each block's entry of every KV cache group
// (tiergroups.go). (vLLM's connector offers every block and
// skips those stored; the blocks found cached were stored before unless a
// tier dropped them while HBM kept them, and looking them all up again
// would cost a look-up per block of every prompt.)
func (in *Instance) offloadFinished(s *Seq) {
	if len(in.cfg.Tiers) == 0 {
		return
	}
	n := min(s.shared, s.committed, len(s.blocks))
	if s.namedOut {
		n = min(s.committed, len(s.blocks))
	}
	from := min(s.CachedTokens/in.cfg.BlockSize, n)
	if n == from {
		return
	}
	in.hashTo(s, n*in.cfg.BlockSize)
	keys := in.offloadKeys(s, from, n)
	for _, t := range in.cfg.Tiers {
		if t.Offload&OffloadOnCompletion != 0 {
			in.writeTo(t, keys)
		}
	}
}

// writeTo writes the entries of keys (block hashes, or a hybrid model's
// group keys) the tier does not hold yet, queued
// behind its earlier writes in prompt order, and sends what they evict
// down; those it holds become the most recently used. The tier's LRU
// order takes them tail first, so that a prompt's leading blocks are the
// most recent and its tail leaves first, as vLLM's block pool frees a
// request's blocks (a chain is found only from its first block).
func (in *Instance) writeTo(t *Tier, hashes []uint64) {
	fresh := in.freshScratch[:0]
	for k := len(hashes) - 1; k >= 0; k-- {
		if !t.Blocks.TouchOne(hashes[k]) {
			fresh = append(fresh, int32(k))
		}
	}
	in.freshScratch = fresh
	if len(fresh) == 0 {
		return
	}
	in.stats.TierWrittenBlocks[t.Kind] += int64(len(fresh))
	base := max(t.writeFreeNs, float64(in.clockNs))
	t.writeFreeNs = base + float64(len(fresh))*t.WriteNsPerBlock
	for i, k := range fresh { // tail first; the i-th from the end is written len−i−th
		ready := int64(base+float64(len(fresh)-i)*t.WriteNsPerBlock+0.5) + t.WriteLatencyNs
		if ev, ok := t.Blocks.Put(hashes[k], ready); ok {
			in.evicted = append(in.evicted, tierEviction{from: t.Kind, hash: ev})
		}
	}
	in.settleEvictions()
}

// tierEviction is a block a tier dropped, on its way to the tier below.
type tierEviction struct {
	from TierKind // the tier that dropped it; NumTiers for HBM
	hash uint64
}

// settleEvictions sends each dropped block to the tier below the one that
// dropped it, when that tier takes blocks on eviction (write-back); it is
// gone otherwise. HBM's evictions come from the pool's log.
func (in *Instance) settleEvictions() {
	if len(in.cfg.Tiers) == 0 {
		return
	}
	for _, h := range in.pool.TakeEvicted() {
		in.evicted = append(in.evicted, tierEviction{from: NumTiers, hash: h})
	}
	for len(in.evicted) > 0 {
		e := in.evicted[len(in.evicted)-1]
		in.evicted = in.evicted[:len(in.evicted)-1]
		if t := in.tierBelow(e.from); t != nil && t.Offload&OffloadOnEviction != 0 && !t.Blocks.Has(e.hash) {
			ready := t.write(1, in.clockNs)
			in.stats.TierWrittenBlocks[t.Kind]++
			if ev, ok := t.Blocks.Put(e.hash, ready); ok {
				in.evicted = append(in.evicted, tierEviction{from: t.Kind, hash: ev})
			}
		}
	}
}

// tierBelow is the tier under the one of kind from (NumTiers: HBM), or nil.
func (in *Instance) tierBelow(from TierKind) *Tier {
	for _, t := range in.cfg.Tiers {
		if from == NumTiers || t.Kind > from {
			return t
		}
	}
	return nil
}

// HandOffToStore queues, at the current time, the write to the
// instance's store of the prompt blocks of finished prefill-role s that
// are not there yet — those offloadFinished did not write, with no
// shareable hash: only its decoder reads them; for a hybrid model also
// the sliding-window groups' blocks it holds past those — and returns
// when all its writes land: Mooncake's KV-centric handoff, the prefiller
// writing the prompt's KV to the store for the decoder to read. It panics
// without a store tier.
func (in *Instance) HandOffToStore(s *Seq) int64 {
	var store *Tier
	for _, t := range in.cfg.Tiers {
		if t.Kind == TierStore {
			store = t
		}
	}
	if store == nil {
		panic("engine: handing off to a store the instance does not have")
	}
	written := 0
	if store.Offload&OffloadOnCompletion != 0 {
		written = min(s.shared, s.committed, len(s.blocks))
	}
	rest := in.blocksFor(s.PromptTokens) - written
	rest += in.cfg.SlidingGroups * max(0, len(s.blocks)-max(int(s.skipped), written))
	in.stats.TierWrittenBlocks[TierStore] += int64(rest)
	return store.write(rest, in.clockNs)
}

// TierRuns is what a router's view of the tiers sees past the first from
// blocks of hashes: a run of them in the host tier, then from where it
// stopped a run in the disk, then one in the store (Dynamo's lower-tier
// walk). It changes nothing.
func (in *Instance) TierRuns(hashes []uint64, from int) [NumTiers]int {
	var runs [NumTiers]int
	j := from
	for _, t := range in.cfg.Tiers {
		start := j
		for j < len(hashes) && t.Blocks.Has(hashes[j]) {
			j++
		}
		runs[t.Kind] = j - start
	}
	return runs
}

// TierBlocks is how many blocks the instance's tier of kind k caches, and
// its capacity (0, 0 without one).
func (in *Instance) TierBlocks(k TierKind) (cached, capacity int) {
	for _, t := range in.cfg.Tiers {
		if t.Kind == k {
			return t.Blocks.Len(), t.Blocks.Capacity()
		}
	}
	return 0, 0
}
