package engine

// preempt evicts a running sequence by the instance's policy: out to a
// lower tier of its memory (the host tier under swap, while it has room:
// memory.preemptOut), or by recomputation: its blocks go back to
// the pool (full ones stay findable in the prefix cache until evicted) and
// it returns to the waiting queue (its front, under fcfs) to re-prefill its whole
// context (or, under reject, to be tested against its cache-hit threshold).
func (in *Instance) preempt(s *Seq) {
	in.forget(s) // its micro-batches in flight compute for nothing now (pipeline.go)
	if in.mem.preemptOut(s) {
		return
	}
	in.settlePrivate(s)
	s.stale = append(s.stale[:0], s.blocks...)
	if in.cfg.Retract { // SGLang frees the KV past the prefix its radix tree holds: the prompt's
		s.stale = s.stale[:min(len(s.stale), s.PromptTokens/in.cfg.BlockSize)]
	}
	if in.deferrable(s) {
		in.deferFree(s, 0, 0) // the retry gains nothing from it this pass
	} else {
		in.slidingFreeAll(s)
		in.pool.Free(s.blocks)
		s.blocks = s.blocks[:0]
	}
	s.computed, s.committed = 0, 0
	s.reprefill = true
	s.Preemptions++
	in.stats.Preemptions++
	in.markVictim(s)
	s.state = stateWaiting
	if in.cfg.Retract && !in.ordered {
		in.waiting.pushBack(s) // SGLang: _extend_requests_to_queue
	} else {
		in.sched.requeue(&in.waiting, s)
	}
	in.res.Preempted = append(in.res.Preempted, s)
}

// reject refuses the head s of queue q: its cache hit is below its
// threshold (vLLM RFC #24256). It holds no blocks (preemption freed them,
// or it was never admitted); the caller hands it back to the router.
func (in *Instance) reject(q *deque, s *Seq) {
	in.leaveQueue(s)
	q.popFront()
	in.acquire(s, 0) // drop the stale table
	s.state = stateDone
	in.stats.Rejections++
	in.res.Rejected = append(in.res.Rejected, s)
	in.unmarkVictim(s)
}
