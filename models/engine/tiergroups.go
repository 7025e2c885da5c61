package engine

import "handoff/models/kv"

// Lower tiers for hybrid models: each KV cache group's blocks apart.
//
// vLLM's OffloadingConnector (vllm/distributed/kv_transfer/kv_connector/
// v1/offloading/scheduler.py, hybrid support from v0.21: PRs #39402,
// #39403, #41228, #41445) keys an offloaded block by (block hash, KV cache
// group) (make_offload_key in vllm/v1/kv_offload/base.py), so a tier holds
// a full-attention block and a sliding-window block of the same tokens as
// two entries, each one group's layers. A tier here does the same: a
// group's block is kept under kv.GroupKey(hash, g), g = 0 for the
// full-attention group (its plain hash, as a model with one group keeps
// it) and 1…SlidingGroups for the sliding-window groups.
//
//   - Store (_build_store_jobs): every block of every group that the
//     request holds when it is computed; a sliding-window group's blocks
//     that slid out before are null (block id 0) and skipped. A block is
//     always in its window in the step that computes it, so both groups
//     store the blocks the request computed. Here they are written as the
//     sequence finishes, the full-attention and sliding-window entries of
//     one block side by side (offloadFinished).
//   - Look-up (_lookup_complete_chunks): the full-attention group's hit
//     is its longest run of held blocks past the HBM hit
//     (_maximal_prefix_lookup); a sliding-window group's is the end of the
//     rightmost run of cdiv(window, B) held blocks within it, or of a
//     shorter run that starts where HBM's hit ends
//     (_sliding_window_lookup); the hit is the least of them, the groups
//     looked up again until it holds for all (lowerMatch).
//   - Load (update_state_after_alloc): the full-attention group's blocks
//     of the hit past HBM's; of a sliding-window group only those in the
//     window at the hit's end, blocks max(HBM hit, ⌊max(0, hit tokens −
//     window + 1)/B⌋) onwards: the KV cache manager gives the earlier ones
//     null blocks (allocate_external_computed_blocks), which load nothing.
//   - Capacity: one pool of slots, each one block of one group, for the
//     entries of every group (CPUOffloadingSpec sizes a slot at the KV
//     tensors' bytes over the pool's blocks, which for gpt-oss's layout —
//     every KV tensor shared by one layer of each group — is one group's
//     block). A tier of C bytes thus holds C / (group block bytes) entries
//     of either group, in one LRU order.
//
// HBM's evictions (write-back) carry full-attention blocks only: the pool
// keeps a sliding-window group's blocks as a count (sliding.go), so a
// hybrid model's tiers need one that takes blocks on completion
// (Config.validateTiers).

// groupKey is the key of group g's block j of s in the lower tiers.
func groupKey(s *Seq, j, g int) uint64 { return kv.GroupKey(s.hashes[j], g) }

// lowerHeld reports whether a lower tier holds the entry of key k.
func (in *Instance) lowerHeld(k uint64) bool {
	t, _ := in.lowerHolder(k)
	return t != nil
}

// slidingHit is the end of the lower tiers' hit for a hybrid model whose
// full-attention group holds blocks from…end−1: the least end at which
// every sliding-window group holds the window before it, each group looked
// up again while another lowers it. Cost O(blocks scanned × groups × tiers).
func (in *Instance) slidingHit(s *Seq, from, end int) int {
	g := in.cfg.SlidingGroups
	for changed := g > 0; changed && end > from; {
		changed = false
		for k := 1; k <= g; k++ {
			if e := in.slidingRunEnd(s, from, end, k); e < end {
				end, changed = e, true
			}
		}
	}
	return end
}

// slidingRunEnd is where the rightmost run of cdiv(window, B) blocks of
// group g held below HBM ends within from…end−1, or, when none is that
// long, the end of the run that starts at from (from when block from is
// not held): vLLM's _sliding_window_lookup.
func (in *Instance) slidingRunEnd(s *Seq, from, end, g int) int {
	want := (in.cfg.SlidingWindow + in.cfg.BlockSize - 1) / in.cfg.BlockSize
	run := 0
	for j := end - 1; j >= from; j-- {
		if !in.lowerHeld(groupKey(s, j, g)) {
			run = 0
			continue
		}
		if run++; run == want {
			return j + want
		}
	}
	return from + run
}

// slidingLoadFrom is the first block of a sliding-window group a hit
// ending at block end loads, HBM's hit ending at from: the blocks before
// the window are null.
func (in *Instance) slidingLoadFrom(from, end int) int {
	return max(from, in.cfg.slidingSkip(end*in.cfg.BlockSize))
}

// countOnboard counts into s.Onboard, by the first tier holding each, the
// entries an onboard of blocks from…end−1 reads: the full-attention
// group's, and each sliding-window group's in the window (those also into
// s.OnboardSliding); s.OnboardReadyNs is when the last can be read.
func (in *Instance) countOnboard(s *Seq, from, end int) {
	for j := from; j < end; j++ {
		in.countEntry(s, groupKey(s, j, 0), false)
	}
	for g := 1; g <= in.cfg.SlidingGroups && end > from; g++ {
		for j := in.slidingLoadFrom(from, end); j < end; j++ {
			in.countEntry(s, groupKey(s, j, g), true)
		}
	}
}

// countEntry counts the read of the entry of key k.
func (in *Instance) countEntry(s *Seq, k uint64, sliding bool) {
	t, ready := in.lowerHolder(k)
	s.Onboard[t.Kind]++
	if sliding {
		s.OnboardSliding[t.Kind]++
	}
	s.OnboardReadyNs = max(s.OnboardReadyNs, ready)
}

// touchSliding makes the sliding-window entries an onboard of blocks
// from…end−1 reads the most recently used in their tiers, and counts
// them, as touchLower the full-attention group's.
func (in *Instance) touchSliding(s *Seq, from, end int) {
	for g := 1; g <= in.cfg.SlidingGroups && end > from; g++ {
		for j := end - 1; j >= in.slidingLoadFrom(from, end); j-- {
			in.touchEntry(groupKey(s, j, g))
		}
	}
}

// touchEntry makes the entry of key k the most recently used in the
// first tier holding it, and counts its read there.
func (in *Instance) touchEntry(k uint64) {
	for _, t := range in.cfg.Tiers {
		if t.Blocks.TouchOne(k) {
			in.stats.TierHitBlocks[t.Kind]++
			return
		}
	}
}

// offloadKeys are the tier entries of s's blocks from…n−1, in prompt
// order: each block's full-attention entry, then its sliding-window
// groups' (kept in in.keyScratch).
func (in *Instance) offloadKeys(s *Seq, from, n int) []uint64 {
	if in.cfg.SlidingGroups == 0 {
		return s.hashes[from:n]
	}
	keys := in.keyScratch[:0]
	for j := from; j < n; j++ {
		for g := 0; g <= in.cfg.SlidingGroups; g++ {
			keys = append(keys, groupKey(s, j, g))
		}
	}
	in.keyScratch = keys
	return keys
}
