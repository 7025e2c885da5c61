package engine

import (
	"math"

	"handoff/models/perf"
)

// Schedule plans the next step with vLLM V1's policy: running sequences
// first, in admission order, each taking the tokens it needs (a prefill chunk
// or one decode token) from the token budget, preempting the last admitted
// sequence when it cannot get a block; then, unless the pass preempted,
// waiting sequences in queue order while the budget and max_num_seqs allow,
// stopping at the first one that cannot get its blocks.
//
// It returns the batch to price, or nil if the instance has nothing to
// compute now, and the sequences preempted or ready to pull KV, which the
// caller handles at the current time. Under AsyncScheduling a step that
// follows another back to back was planned when that one started, so it
// admits only sequences enqueued by then (see Config.AsyncScheduling).
// Cost: O(running + admitted).
func (in *Instance) Schedule(nowNs int64) (*perf.Batch, *StepResult) {
	if in.inStep {
		panic("engine: scheduling while a step is in flight")
	}
	in.res.reset()
	in.clockNs = nowNs
	in.settleWaits(nowNs)
	defer in.setWaitCause()
	in.batch = perf.Batch{}
	in.cutoffNs = math.MaxInt64
	pipelined := in.cfg.AsyncScheduling && in.stats.Steps > 0 && nowNs == in.lastEndNs
	in.processed = in.stats.Steps - int64(len(in.flights))
	if pipelined {
		in.cutoffNs = in.lastStart
		in.processed-- // vLLM's step k is in flight while it plans k+1 (deferred.go)
	}
	if len(in.deferred) > 0 {
		in.drainDeferred(in.processed)
	}
	in.startCruises()
	if in.unsorted {
		in.sortRunning()
		in.unsorted = false
	}
	in.cut, in.cutEnd = 0, 0
	k := in.stats.Steps + 1 // the step being planned
	if budget := in.cfg.MaxBatchedTokens - len(in.running); in.steady(k) {
		if in.waiting.len()+in.ready.len()+in.swapped.len() > 0 {
			in.admitAll(budget) // as the general pass admits after the running set
		}
	} else {
		in.schedulePass(k, pipelined)
	}
	in.planAgainIdle(k)
	in.settleEvictions()
	if len(in.step)+in.cruising == 0 {
		if in.cfg.Admission == NewTokenRatio {
			in.ratio = sglInitRatio // idle: SGLang starts its estimate afresh
		}
		return nil, &in.res
	}
	in.planCruising(k)
	in.inStep = true
	in.stats.Steps++
	if in.pipelined() {
		in.launch()
	}
	return &in.batch, &in.res
}

// schedulePass plans step k the general way: running sequences, then
// admission.
func (in *Instance) schedulePass(k int64, pipelined bool) {
	retracted := in.cfg.Retract && in.retractForDecode()
	budget, preempted := in.scheduleRunning(k, in.cfg.MaxBatchedTokens)
	preempted = preempted || retracted
	if !preempted {
		in.admitAll(budget)
	} else if in.stopFor(WaitKV); len(in.step)+in.cruising == 0 {
		// The pass preempted every running sequence and so may not admit:
		// vLLM's engine loop schedules again at once.
		in.admitAll(in.cfg.MaxBatchedTokens)
	}
	if len(in.step)+in.cruising == 0 && pipelined {
		in.cutoffNs = math.MaxInt64 // nothing else to run: the engine is idle, not pipelined
		in.admitAll(in.cfg.MaxBatchedTokens)
	}
}

// steady plans the running set's part of step k if it is steady: every
// running sequence cruises, none is due but for its last token, the token
// budget holds them all and the blocks of phase k's boundaries are free
// (taken then). The general pass would plan the same, visiting every
// sequence to take nothing from most of them; this costs O(1) but for a
// scan of the dues when their lower bound is reached. Admission follows
// as in the general pass (Schedule). It reports false, having changed
// nothing, otherwise.
func (in *Instance) steady(k int64) bool {
	n := in.cruising
	if n == 0 || n != len(in.running) || n > in.cfg.MaxBatchedTokens || in.noCruise {
		return false
	}
	last := false // some sequences compute their last token
	if k >= in.nextDue {
		next, due, ok := in.duesAt(k)
		if !ok {
			return false
		}
		in.nextDue, last = next, due
	}
	if in.phaseCount != nil {
		if need := int(in.phaseCount[in.phaseOf(k)]); need > 0 && !in.pool.AllocateAnonymous(need) {
			in.steadyShort++
			return false
		}
	}
	if last {
		in.planLastTokens(k)
	}
	in.stats.SteadySteps++
	return true
}

// duesAt scans the cruising sequences' dues for step k: the first due
// after k (the next lower bound), whether any sequence is due at k, and
// ok, whether every one due at k is due only for its last token here, with
// room for it in its blocks — planning them then takes no block, so the
// others' boundaries may be taken in one count. (A hybrid model's
// sequences take their window's blocks through the general pass.)
func (in *Instance) duesAt(k int64) (next int64, due, ok bool) {
	kp, b := in.phaseOf(k), in.cfg.BlockSize
	next = math.MaxInt64
	for i, d := range in.due {
		if d > k {
			next = min(next, d)
			continue
		}
		due = true
		if in.cfg.SlidingGroups > 0 || d != in.trip[i].lastStep || in.phase[i] == kp {
			return 0, true, false
		}
		// Without a phase, its blocks are its table; its context before
		// step k is its relative computed + the k − 1 steps completed.
		if s := in.running[i]; in.phase[i] == noPhase && s.computed+int(k) > len(s.blocks)*b {
			return 0, true, false
		}
	}
	return next, due, true
}

// planLastTokens settles the sequences due at step k for their last token
// and plans it, in running order, as the general pass would.
func (in *Instance) planLastTokens(k int64) {
	for i, d := range in.due {
		if d > 0 && d <= k {
			in.settle(i)
			in.plan(in.running[i], i, 1)
		}
	}
}

// scheduleRunning gives each running sequence its tokens for step k,
// preempting from the tail when blocks run out. A cruising sequence not due
// yet just takes its decode token from the budget, as does one due only for
// a block it can get; the others are brought up to date first, as are those
// the budget leaves out. It returns the budget left and whether it
// preempted.
func (in *Instance) scheduleRunning(k int64, budget int) (int, bool) {
	preempted := false
	i := 0
	kp := in.phaseOf(k)
	for i < len(in.running) && budget > 0 {
		if skip := in.notDue(i, k, kp, budget); skip > 0 {
			i, budget = i+skip, budget-skip
			continue
		}
		if in.due[i] > k && in.pool.AllocateAnonymous(1) { // its phase's boundary
			i, budget = i+1, budget-1
			continue
		}
		if in.due[i] == k && k < in.trip[i].lastStep && in.growCruising(i, k) {
			i, budget = i+1, budget-1
			continue
		}
		in.settle(i)
		s := in.running[i]
		done := s.computed + int(s.inflight) // planned: computed, or in flight (pipeline.go)
		if done == s.Tokens() {
			i++ // in flight with all it has to compute
			continue
		}
		n := min(s.Tokens()-done, budget)
		d := in.drafts(s, n, budget)
		for !in.grow(s, in.slotsFor(done, done+n+d)) {
			if in.victimFenced() {
				in.cutAt(i) // s and those after it sit this step out
				return budget, preempted
			}
			in.settle(len(in.running) - 1)
			victim := in.popRunning()
			in.preempt(victim)
			preempted = true
			if victim == s {
				return budget, preempted
			}
		}
		if d > 0 {
			in.planVerify(s, i, d)
		} else {
			in.plan(s, i, n)
		}
		i, budget = i+1, budget-n-d
	}
	in.cutAt(i)
	return budget, preempted
}

// cutAt leaves the running sequences from position i on out of the step
// being planned, bringing any that cruise up to date.
func (in *Instance) cutAt(i int) {
	in.settleFrom(i)
	in.cut, in.cutEnd = i, len(in.running)
}

// notDue counts the cruising sequences from position i on, at most most,
// that are neither due at step k nor cross a block boundary of its phase
// kp: the run of them the scan passes over.
func (in *Instance) notDue(i int, k int64, kp int16, most int) int {
	end := min(len(in.due), i+most)
	run, phase := in.due[i:end], in.phase[i:end]
	for j, d := range run {
		if d <= k || phase[j] == kp {
			return j
		}
	}
	return len(run)
}

// admitAll admits, in order: ready sequences (they hold their blocks),
// swapped-out ones (vLLM V0 swaps in before admitting new work, and admits
// none while any remain swapped out), then the waiting queue.
//
// When sequences stay queued it records why (waits.go).
func (in *Instance) admitAll(budget int) {
	in.startPass()
	for !in.cfg.SharedQueue && in.ready.len() > 0 && budget > 0 && len(in.running) < in.cfg.MaxSeqs &&
		in.ready.front().markNs <= in.cutoffNs {
		n, ok := in.mem.admit(&in.ready, in.ready.front(), budget)
		if !ok {
			in.stopReason(budget, false)
			return
		}
		budget -= n
	}
	for in.swapped.len() > 0 && budget > 0 && len(in.running) < in.cfg.MaxSeqs {
		n, ok := in.mem.swapIn(in.swapped.front(), budget)
		if !ok {
			in.stopReason(budget, false)
			return
		}
		budget -= n
	}
	if in.swapped.len() > 0 {
		in.stopReason(budget, false) // nothing new is admitted while any is swapped out
		return
	}
	in.stopReason(in.admitWaiting(budget))
}

// admitWaiting admits sequences from the head of the waiting queue. With
// SharedQueue, sequences pulling remote KV are passed over and go back to
// the head when the pass ends (vLLM's step_skipped_waiting).
// It returns the budget left and false when the head could not get its
// room.
func (in *Instance) admitWaiting(budget int) (int, bool) {
	defer in.unskip()
	for in.waiting.len() > 0 && budget > 0 && len(in.running) < in.cfg.MaxSeqs {
		s := in.waiting.front()
		if s.markNs > in.cutoffNs && s.state != statePulling {
			if !in.ordered {
				return budget, true // enqueued after this step was planned (AsyncScheduling)
			}
			// In priority order a later arrival may stand ahead of
			// earlier ones, which this step does see.
			in.skipped.pushBack(in.waiting.popFront())
			continue
		}
		if s.state == statePulling {
			in.skipped.pushBack(in.waiting.popFront())
			continue
		}
		if s.Remote && !s.admitted {
			if !in.mem.reserve(s) {
				return budget, false
			}
			continue
		}
		n, ok := in.mem.admit(&in.waiting, s, budget)
		if !ok {
			return budget, false
		}
		budget -= n
	}
	return budget, true
}

// unskip returns the sequences passed over in an admission pass to the
// head of the waiting queue, in the order they were met.
func (in *Instance) unskip() {
	for in.skipped.len() > 0 {
		in.waiting.pushFront(in.skipped.popBack())
	}
}

// startRunning moves the head s of queue q into the running set with its
// first n tokens planned.
func (in *Instance) startRunning(q *deque, s *Seq, n int) {
	in.leaveQueue(s)
	q.popFront()
	s.state = stateRunning
	in.plan(s, in.addRunning(s), n)
}

// startPulling moves the waiting head s, which holds room for its prompt,
// to the pulling state and hands it to the caller to start its transfer of
// remoteTokens prompt tokens.
func (in *Instance) startPulling(s *Seq, remoteTokens int) {
	s.admitted = true
	s.RemoteTokens = remoteTokens
	in.stats.PromptTokensSeen += int64(s.PromptTokens)
	in.leaveQueue(s)
	in.waiting.popFront()
	if in.cfg.SharedQueue {
		in.skipped.pushBack(s) // it waits for its KV in the waiting queue
	}
	s.state = statePulling
	in.pulling++
	in.res.Pulls = append(in.res.Pulls, s)
}

// match returns how many leading full blocks of the sequence's context are
// in the prefix cache, leaving at least one token to compute: the shareable
// blocks are looked up in the pool's index, the private ones (see
// kv.CommitPrivate) among the blocks the sequence held before a preemption.
func (in *Instance) match(s *Seq) int {
	if !in.cfg.PrefixCaching {
		return 0
	}
	limit := (s.Tokens() - 1) / in.cfg.BlockSize
	shared := min(s.shared, limit)
	in.hashTo(s, shared*in.cfg.BlockSize)
	hit := in.pool.Match(s.hashes[:shared])
	if hit < shared || hit >= min(limit, len(s.stale)) {
		return hit
	}
	end := min(limit, len(s.stale))
	in.hashTo(s, end*in.cfg.BlockSize)
	return hit + in.pool.Held(s.stale[hit:end], s.hashes[hit:end])
}

// freeAmong is how many of the hit blocks sit in the free queue.
func (in *Instance) freeAmong(s *Seq, hit int) int {
	shared := min(hit, s.shared)
	n := in.pool.FreeAmong(s.hashes[:shared])
	if hit > shared {
		n += in.pool.FreeAmongBlocks(s.stale[shared:hit])
	}
	return n
}

// acquire takes the hit blocks: shared ones through the index, private ones
// from the sequence's pre-preemption table.
func (in *Instance) acquire(s *Seq, hit int) {
	shared := min(hit, s.shared)
	s.blocks = in.pool.Acquire(s.blocks, s.hashes[:shared])
	if hit > shared {
		s.blocks = in.pool.AcquireBlocks(s.blocks, s.stale[shared:hit])
	}
	s.stale = s.stale[:0]
}

// plan adds n tokens of s, at running position pos, to the step and to the
// batch summary.
func (in *Instance) plan(s *Seq, pos, n int) {
	in.step = append(in.step, stepEntry{s: s, pos: int32(pos), tokens: int32(n)})
	s.lastStep = in.stats.Steps + 1
	if s.Hold && s.computed+int(s.inflight)+n == s.Tokens() {
		in.res.FinalChunks = append(in.res.FinalChunks, s)
	}
	ctx := s.computed + int(s.inflight)
	b := &in.batch
	if n == 1 {
		b.DecodeSeqs++
		b.DecodeContext += int64(ctx + 1)
		return
	}
	b.PrefillSeqs++
	b.PrefillTokens += n
	b.PrefillTokensSq += float64(n) * float64(n)
	b.PrefillAttn += float64(n) * (float64(ctx) + float64(n+1)/2)
	b.PrefillCtxRead += int64(ctx)
	in.stats.PrefillTokens += int64(n)
	if s.reprefill {
		in.stats.ReprefillTokens += int64(n)
	}
}

func (in *Instance) blocksFor(tokens int) int {
	return (tokens + in.cfg.BlockSize - 1) / in.cfg.BlockSize
}

func (r *StepResult) reset() {
	r.FirstTokens = r.FirstTokens[:0]
	r.Finished = r.Finished[:0]
	r.Preempted = r.Preempted[:0]
	r.Pulls = r.Pulls[:0]
	r.Onboards = r.Onboards[:0]
	r.Rejected = r.Rejected[:0]
	r.FinalChunks = r.FinalChunks[:0]
	r.Recovered = r.Recovered[:0]
	r.TokenGapsNs = r.TokenGapsNs[:0]
	r.SteadyTokens, r.SteadyGapNs, r.DraftedTokens = 0, 0, 0
}
