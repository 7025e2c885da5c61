package engine

// paged is vLLM's memory: the pool of fixed-size KV blocks (kv.Pool), a
// table of them per sequence, shared through the prefix cache, the lower
// tiers it reads prefix hits from (tiers.go), and, under the swap policy, a
// host tier to preempt to: the host Tier, or Config.HostBlocks blocks.
type paged struct {
	in       *Instance
	hostUsed int // host-tier blocks in use
}

// admit is memory.admit: the sequence takes its prefix-cache hit (when it
// holds no blocks yet) and blocks for its first chunk, or, below its
// cache-hit threshold (re-admitted under the reject policy, or at its
// first admission), is refused.
func (p *paged) admit(q *deque, s *Seq, budget int) (int, bool) {
	in := p.in
	hit, lower := 0, 0
	if s.computed == 0 && len(s.blocks) == 0 {
		hit = in.match(s)
		lower = in.lowerMatch(s, hit)
	}
	start := max(s.computed, (hit+lower)*in.cfg.BlockSize)
	if refused(s, start) {
		in.reject(q, s)
		return 0, true
	}
	if lower > 0 {
		return 0, p.onboard(s, hit, lower)
	}
	n := s.Tokens() - start
	if in.cfg.NoChunkedPrefill && n > budget {
		in.stopFor(WaitBudget)
		return 0, false
	}
	n = min(n, budget)
	need := max(0, in.blocksFor(in.slotsFor(s.computed, start+n))-len(s.blocks)-hit) // KV-lost sequences hold blocks already
	in.slidingFree(s, start)
	sliding := in.slidingNeed(s, start, len(s.blocks)+hit+need)
	room := in.admissionRoom(s, hit, false)
	if need+sliding > room || in.cfg.Admission == FullSequence && in.wholeNeed(s, start, hit) > room ||
		in.kindRefuses(s, start, hit, room) {
		return 0, false
	}
	in.acquire(s, hit)
	s.blocks, _ = in.pool.Allocate(s.blocks, need)
	in.slidingTake(s, start, sliding)
	if s.computed == 0 {
		s.computed, s.committed = start, hit
	}
	p.firstAdmission(s, start)
	in.admitted(s, start, n)
	in.startRunning(q, s, n)
	return n, true
}

// refused reports whether s, which would start with start tokens cached,
// falls below its cache-hit threshold: re-admitted after a preemption
// under the reject policy (its context), or at its first admission (its
// prompt).
func refused(s *Seq, start int) bool {
	switch {
	case s.reprefill && s.CacheHitThreshold > 0:
		return float64(start) < s.CacheHitThreshold*float64(s.Tokens())
	case !s.admitted && s.AdmitHitThreshold > 0:
		return float64(start) < s.AdmitHitThreshold*float64(s.PromptTokens)
	}
	return false
}

// firstAdmission counts a sequence's prefix-cache hit, start tokens, the
// first time it is admitted.
func (p *paged) firstAdmission(s *Seq, start int) {
	if !s.admitted {
		s.admitted = true
		s.CachedTokens = min(start, s.PromptTokens)
		p.in.stats.PrefixHitTokens += int64(s.CachedTokens)
		p.in.stats.PromptTokensSeen += int64(s.PromptTokens)
	}
}

// onboard gives the waiting head s, whose prefix is hit blocks in HBM and
// lower blocks past them in the lower tiers, blocks for the lower ones and
// starts their copy up (vLLM allocates only the external tokens' blocks
// for an asynchronous load: Scheduler.schedule, load_kv_async). False when
// the room is not there. A hybrid model's sliding-window groups take the
// blocks of the window at the hit's end (allocate_external_computed_blocks).
func (p *paged) onboard(s *Seq, hit, lower int) bool {
	in := p.in
	start := (hit + lower) * in.cfg.BlockSize
	sliding := in.slidingNeed(s, start, hit+lower)
	room := in.admissionRoom(s, hit, false)
	if lower+sliding > room-in.inflightReserve() || in.cfg.Admission == FullSequence && in.wholeNeed(s, 0, hit) > room ||
		in.kindRefuses(s, start, hit, room) {
		return false
	}
	in.acquire(s, hit)
	s.blocks, _ = in.pool.Allocate(s.blocks, lower)
	in.slidingTake(s, start, sliding)
	s.committed = hit
	in.touchLower(s, hit, lower)
	p.firstAdmission(s, (hit+lower)*in.cfg.BlockSize)
	in.admitted(s, start, s.Tokens()-start) // what it computes once its onboard lands
	in.startOnboard(s, lower)
	return true
}

// reserve is memory.reserve: blocks for the whole prompt, its local
// prefix-cache hit plus room for the rest.
func (p *paged) reserve(s *Seq) bool {
	in := p.in
	hit := in.match(s)
	lower := in.lowerMatch(s, hit)
	need := in.blocksFor(s.PromptTokens) - hit
	// The sliding-window groups take the prompt's last window only
	// (allocate_new_computed_blocks pads the rest with null blocks).
	sliding := in.slidingNeed(s, s.PromptTokens, hit+need)
	room := in.admissionRoom(s, hit, true)
	if need+sliding > room || in.cfg.Admission == ReserveOutput && !in.reserveAdmits(s, hit, room) {
		return false
	}
	in.acquire(s, hit)
	s.blocks, _ = in.pool.Allocate(s.blocks, need)
	in.slidingTake(s, s.PromptTokens, sliding)
	s.committed = hit
	s.CachedTokens = hit * in.cfg.BlockSize
	in.stats.PrefixHitTokens += int64(s.CachedTokens)
	in.touchLower(s, hit, lower)
	if in.cfg.Admission == ReserveOutput {
		in.reserved += in.toComplete(s, 0)
	}
	in.startPulling(s, s.PromptTokens-(hit+lower)*in.cfg.BlockSize)
	return true
}

// grow is memory.grow: the blocks tokens tokens need beyond the table.
func (p *paged) grow(s *Seq, tokens int) bool {
	in := p.in
	if in.cfg.SlidingGroups > 0 {
		return in.growSliding(s, tokens)
	}
	need := in.blocksFor(tokens) - len(s.blocks)
	if need <= 0 {
		return true
	}
	blocks, ok := in.pool.Allocate(s.blocks, need)
	s.blocks = blocks
	return ok
}

// release is memory.release: the sliding-window groups' blocks, then the
// table (full blocks stay findable in the prefix cache until evicted),
// then any host-tier blocks.
func (p *paged) release(s *Seq) {
	in := p.in
	if in.deferrable(s) {
		in.deferFree(s, s.shared, s.committed)
	} else {
		in.slidingFreeAll(s)
		in.pool.FreeSettled(s.blocks, s.shared, s.committed)
		s.blocks = s.blocks[:0]
	}
	p.freeHost(s)
}

// freeHost gives back the host-tier room s holds while swapped out.
func (p *paged) freeHost(s *Seq) {
	if t := p.in.cfg.hostTier(); t != nil && s.hostBlocks > 0 {
		t.Blocks.Unreserve(s.hostBlocks)
	}
	p.hostUsed -= s.hostBlocks
	s.hostBlocks = 0
}

// reserveHost holds host-tier room for n swapped-out blocks: in the host
// Tier, evicting its cached blocks (down a tier when it writes back), or
// in the swap space.
func (p *paged) reserveHost(n int) bool {
	in := p.in
	t := in.cfg.hostTier()
	if t == nil {
		return p.hostUsed+n <= in.cfg.HostBlocks
	}
	var ok bool
	if in.scratch, ok = t.Blocks.Reserve(n, in.scratch[:0]); !ok {
		return false
	}
	for _, h := range in.scratch {
		in.evicted = append(in.evicted, tierEviction{from: TierHost, hash: h})
	}
	return true
}

// room is memory.room: what the table's last block has left.
func (p *paged) room(s *Seq) int { return len(s.blocks)*p.in.cfg.BlockSize - s.computed }

// hostBlocks is memory.hostBlocks.
func (p *paged) hostBlocks() int { return p.hostUsed }

// preemptOut is memory.preemptOut: under the swap policy, the victim's
// blocks are copied to the host tier (vLLM V0's swap preemption) and
// freed on the device, while the tier has room.
func (p *paged) preemptOut(s *Seq) bool {
	in := p.in
	n := in.SeqBlocks(s)
	if in.cfg.Preemption != Swap || !p.reserveHost(n) {
		return false
	}
	p.hostUsed += n
	s.hostBlocks = n
	in.slidingFreeAll(s)
	in.pool.FreeSettled(s.blocks, s.shared, s.committed)
	s.blocks = s.blocks[:0]
	s.committed = 0
	s.SwapOuts++
	s.Preemptions++
	in.stats.Preemptions++
	in.markVictim(s)
	in.stats.SwapOuts++
	in.stats.SwappedBlocks += int64(n)
	in.batch.SwapBlocks += n
	s.state = stateSwapped
	in.swapped.pushBack(s)
	in.res.Preempted = append(in.res.Preempted, s)
	return true
}

// swapIn is memory.swapIn: the oldest swapped-out sequence is copied back
// into fresh device blocks, enough for its KV and its next tokens (a
// decode token, or the rest of a prefill chunk within the budget).
func (p *paged) swapIn(s *Seq, budget int) (int, bool) {
	in := p.in
	n := min(s.Tokens()-s.computed, budget)
	need := in.blocksFor(s.computed + n)
	sliding := in.slidingNeed(s, s.computed, need)
	if need+sliding > in.pool.FreeBlocks() {
		return 0, false
	}
	s.blocks, _ = in.pool.Allocate(s.blocks, need)
	in.slidingTake(s, s.computed, sliding)
	in.stats.SwappedBlocks += int64(s.hostBlocks)
	in.batch.SwapBlocks += s.hostBlocks
	p.freeHost(s)
	in.commitFull(s)
	in.swapped.popFront()
	s.state = stateRunning
	s.swappedIn = true
	pos := in.addRunning(s)
	in.res.Recovered = append(in.res.Recovered, s)
	in.unmarkVictim(s)
	in.plan(s, pos, n)
	return n, true
}

// admissionRoom is how many blocks the waiting sequence s, with hit blocks
// found in the prefix cache, may take: the free blocks less the hit blocks
// that sit in the free queue, less the watermark while anything runs
// (Rules.WatermarkBlocks: allocate_slots with has_scheduled_reqs), and,
// for an async load, less what the prefills in flight still need
// (Rules.ReserveInflight).
func (in *Instance) admissionRoom(s *Seq, hit int, load bool) int {
	room := in.pool.FreeBlocks() - in.freeAmong(s, hit)
	if len(in.running) > 0 {
		room -= in.cfg.WatermarkBlocks
	}
	if load {
		room -= in.inflightReserve()
	}
	return room
}

// wholeNeed is how many blocks s's whole context needs beyond its table
// and its hit blocks: what FullSequence admission asks to be free
// (allocate_slots with full_sequence_must_fit: min(num_tokens,
// max_model_len), less the blocks held and hit). A hybrid model's sliding
// groups count at most the blocks a window and a budget's chunk span, as
// vLLM caps them (max_admission_blocks_per_request, PR #40946), charged as
// slidingNeed charges a chunk. Call it after slidingFree for start.
func (in *Instance) wholeNeed(s *Seq, start, hit int) int {
	blocks := in.blocksFor(min(s.Tokens(), in.cfg.MaxModelLen))
	need := max(0, blocks-len(s.blocks)-hit)
	if g := in.cfg.SlidingGroups; g > 0 {
		cap := (in.cfg.SlidingWindow-1+in.cfg.MaxBatchedTokens+in.cfg.BlockSize-1)/in.cfg.BlockSize + 1
		need += min(in.slidingNeed(s, start, len(s.blocks)+hit+need), g*cap)
	}
	return need
}

// inflightReserve is what the prefills in flight still need to hold
// their whole sequences, which an async load may not take
// (Rules.ReserveInflight; 0 without it): for each running sequence with
// more than its next token to compute, the blocks of min(tokens,
// max_model_len) beyond its table (Scheduler._inflight_prefill_reserved_
// blocks, _request_remaining_blocks). A parked load holds its prompt's
// blocks and needs none. Prefills are planned in the step (in.step) unless
// the running pass left them out (in.cut to in.cutEnd); cruising
// sequences decode.
// Sliding-window groups are not counted.
func (in *Instance) inflightReserve() int {
	if !in.cfg.ReserveInflight {
		return 0
	}
	n := 0
	for _, e := range in.step {
		n += in.remaining(e.s)
	}
	for i := in.cut; i < in.cutEnd; i++ {
		if in.due[i] == 0 {
			n += in.remaining(in.running[i])
		}
	}
	return n
}

// remaining is what running s, if it prefills, needs beyond its table.
func (in *Instance) remaining(s *Seq) int {
	if s.computed >= s.Tokens()-1 {
		return 0 // it decodes
	}
	return max(0, in.blocksFor(min(s.Tokens(), in.cfg.MaxModelLen))-len(s.blocks))
}
