package engine

// TensorRT-LLM's capacity scheduler as rules of this engine. The source
// is NVIDIA/TensorRT-LLM's cpp/tensorrt_llm/batch_manager/
// capacityScheduler.cpp.
//
// GUARANTEED_NO_EVICT, its default (Rules.Admission = ReserveOutput):
// GuaranteedNoEvictScheduler::impl first counts, through
// NoEvictScheduledBlocksManager.decrementReservedBlocks, the blocks each
// request in progress still needs to reach its prompt plus its max
// output; a pending request is then scheduled only if its own such
// blocks fit in what is left (enoughAvailableBlocks), and the first that
// does not stops the pass. A running request therefore never runs out of
// blocks and is never evicted.
//
// MAX_UTILIZATION (Rules.Admission = FirstChunk): MaxUtilizationScheduler
// schedules requests in order while the blocks of their next step fit
// (trySchedulingRequestMaxUtilization) and, when one does not, pauses the
// most recently started request after it, freeing its KV, and tries
// again; a new request that does not fit stops the pass. This is the
// engine's first-chunk admission with recompute preemption of the last
// admitted, as vLLM before v0.19; one difference is not modelled: after
// a pause it goes on scheduling pending requests in the same pass, where
// vLLM (and this engine) admits none in a step that preempted.
//
// A request's max output is its output length here (Seq.MaxNew), as a
// benchmark client sets max_tokens to it with ignore_eos.

// toComplete is how many blocks s still needs to hold its prompt and its
// whole output here (getRemainingBlocksToCompletion), beyond its table
// and hit blocks of the prefix cache.
func (in *Instance) toComplete(s *Seq, hit int) int {
	return max(0, in.blocksFor(min(s.PromptTokens+s.MaxNew, in.cfg.MaxModelLen))-len(s.blocks)-hit)
}

// startReservePass counts the blocks the running sequences still need to
// complete, at the start of an admission pass.
func (in *Instance) startReservePass() {
	in.reserved = 0
	for _, s := range in.running {
		in.reserved += in.toComplete(s, 0)
	}
}

// reserveAdmits reports whether GUARANTEED_NO_EVICT admits s, with hit
// prefix-cache blocks, given room free blocks; admitted, its remaining
// blocks join the reservation.
func (in *Instance) reserveAdmits(s *Seq, hit, room int) bool {
	return in.toComplete(s, hit) <= room-in.reserved
}

// admitted counts what s, just given its first blocks, takes from the
// pass's room under the kind's admission rule.
func (in *Instance) admitted(s *Seq, start, n int) {
	switch in.cfg.Admission {
	case NewTokenRatio:
		in.chargeRatio(s, start, n)
	case ReserveOutput:
		in.reserved += in.toComplete(s, 0)
	}
}

// kindRefuses reports whether the kind's admission rule refuses s, with
// start tokens cached of which hit blocks are in HBM, given room free
// blocks.
func (in *Instance) kindRefuses(s *Seq, start, hit, room int) bool {
	switch in.cfg.Admission {
	case NewTokenRatio:
		return !in.ratioAdmits(s, start, room)
	case ReserveOutput:
		return !in.reserveAdmits(s, hit, room)
	}
	return false
}

// startPass readies the kind's admission rule for a pass.
func (in *Instance) startPass() {
	switch in.cfg.Admission {
	case NewTokenRatio:
		in.startRatioPass()
	case ReserveOutput:
		in.startReservePass()
	}
}
