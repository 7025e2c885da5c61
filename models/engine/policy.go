package engine

// swapOut copies a victim's blocks to the host tier (vLLM V0's swap
// preemption) and frees them on the device. It reports false, changing
// nothing, when the host tier lacks room (the caller then recomputes).
func (in *Instance) swapOut(s *Seq) bool {
	n := in.SeqBlocks(s)
	if in.hostUsed+n > in.cfg.HostBlocks {
		return false
	}
	in.hostUsed += n
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

// swapIn copies the oldest swapped-out sequence back into fresh device
// blocks and schedules its next tokens (a decode token, or the rest of a
// prefill chunk within the budget). It returns the tokens scheduled, or
// false when the device lacks the blocks for its KV and those tokens.
func (in *Instance) swapIn(s *Seq, budget int) (int, bool) {
	n := min(s.Tokens()-s.computed, budget)
	need := in.blocksFor(s.computed + n)
	sliding := in.slidingNeed(s, s.computed, need)
	if need+sliding > in.pool.FreeBlocks() {
		return 0, false
	}
	s.blocks, _ = in.pool.Allocate(s.blocks, need)
	in.slidingTake(s, s.computed, sliding)
	in.hostUsed -= s.hostBlocks
	in.stats.SwappedBlocks += int64(s.hostBlocks)
	in.batch.SwapBlocks += s.hostBlocks
	s.hostBlocks = 0
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

// reject refuses the head s of queue q: its cache hit is below its
// threshold (vLLM RFC #24256). It holds no blocks (preemption freed them);
// the caller hands it back to the router.
func (in *Instance) reject(q *deque, s *Seq) {
	q.popFront()
	in.acquire(s, 0) // drop the stale table
	s.state = stateDone
	in.stats.Rejections++
	in.res.Rejected = append(in.res.Rejected, s)
	in.unmarkVictim(s)
}
