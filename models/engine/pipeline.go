package engine

// Pipeline parallelism (Config.Stages > 1). vLLM's engine core keeps up to
// pp batches in flight (max_concurrent_batches, vllm/config/vllm.py), one
// per stage: step_with_batch_queue (vllm/v1/engine/core.py) schedules a
// new batch whenever its batch queue has room, and blocks on the oldest
// batch only when the queue is full or nothing else can be scheduled.
// The scheduler plans each batch from what is not already in flight: a
// running request whose scheduled tokens have all been planned has no new
// token to schedule until its output is back (num_new_tokens == 0 in
// Scheduler.schedule, vllm/v1/core/sched/scheduler.py: "PP>1 and we have
// already scheduled all prompt tokens but they are not finished yet"),
// while one with prompt tokens left may have its next chunk planned into
// the next batch.
//
// Here each Schedule plans one micro-batch the usual way — a running
// sequence takes the tokens it has left beyond those in flight (Seq.
// inflight), so a decoding one in flight is passed over — and launches it
// into a FIFO of micro-batches in flight. Complete applies the oldest.
// Busy reports the FIFO full: the caller plans again only when one
// completes. A sequence preempted or aborted while in flight leaves its
// entries behind, emptied (forget), and its output is discarded as vLLM's
// update_from_output discards a preempted request's. Sequences do not
// cruise (every step visits them), and asynchronous scheduling's one step
// of look-ahead does not apply: the batch queue is the look-ahead.

// microBatch is one micro-batch in flight: its sequences and tokens.
type microBatch struct {
	entries []stepEntry
}

// pipelined reports whether the instance keeps micro-batches in flight.
func (in *Instance) pipelined() bool { return in.cfg.Stages > 1 }

// InFlight is how many micro-batches are in flight: 0 or 1 without
// pipeline parallelism (a step), up to Config.Stages with it.
func (in *Instance) InFlight() int {
	if in.pipelined() {
		return len(in.flights)
	}
	if in.inStep {
		return 1
	}
	return 0
}

// launch moves the step just planned into the micro-batches in flight.
func (in *Instance) launch() {
	var mb microBatch
	if n := len(in.spareFlights); n > 0 {
		mb, in.spareFlights = in.spareFlights[n-1], in.spareFlights[:n-1]
	}
	for _, e := range in.step {
		e.s.inflight += e.tokens
		mb.entries = append(mb.entries, e)
	}
	clear(in.step)
	in.step = in.step[:0]
	in.flights = append(in.flights, mb)
	in.inStep = len(in.flights) >= in.cfg.Stages
}

// completeMicro applies the oldest micro-batch in flight, which ran from
// startNs to nowNs (Complete).
func (in *Instance) completeMicro(startNs, nowNs int64) *StepResult {
	if len(in.flights) == 0 {
		panic("engine: completing with no micro-batch in flight")
	}
	in.res.reset()
	in.clockNs = nowNs
	in.busyNs += nowNs - startNs
	in.lastEndNs, in.lastStart = nowNs, startNs
	mb := in.flights[0]
	finished := false
	for _, e := range mb.entries {
		if e.s != nil {
			finished = in.applyMicro(e, startNs, nowNs) || finished
		}
	}
	copy(in.flights, in.flights[1:])
	in.flights[len(in.flights)-1] = microBatch{}
	in.flights = in.flights[:len(in.flights)-1]
	clear(mb.entries)
	in.spareFlights = append(in.spareFlights, microBatch{entries: mb.entries[:0]})
	if finished {
		in.removeDone()
	}
	in.settleEvictions()
	in.inStep = false
	return &in.res
}

// applyMicro advances one sequence of a completed micro-batch by its
// tokens; it reports whether the sequence finished here.
func (in *Instance) applyMicro(e stepEntry, startNs, nowNs int64) bool {
	s := e.s
	s.account(max(startNs, s.markNs), nowNs) // an earlier chunk of it may have ended after this one started
	s.computed += int(e.tokens)
	s.inflight -= e.tokens
	in.commitFull(s)
	if s.inflight > 0 || s.computed < s.Tokens() {
		return false // more of its prompt is in flight or still to plan
	}
	if s.reprefill {
		s.reprefill = false
		in.res.Recovered = append(in.res.Recovered, s)
		in.unmarkVictim(s)
	}
	in.emitToken(s, nowNs)
	return s.state != stateRunning
}

// removeDone drops from the running set the sequences that finished,
// keeping the order of the rest (none cruises: their dues are 0).
func (in *Instance) removeDone() {
	kept := 0
	for _, s := range in.running {
		if s.state == stateRunning {
			in.running[kept] = s
			kept++
		}
	}
	clear(in.running[kept:])
	in.running, in.due, in.phase, in.trip = in.running[:kept], in.due[:kept], in.phase[:kept], in.trip[:kept]
}

// forget empties s's entries in the micro-batches in flight: it was
// preempted or aborted, and what they compute for it is discarded.
func (in *Instance) forget(s *Seq) {
	if s.inflight == 0 {
		return
	}
	for i := range in.flights {
		for j := range in.flights[i].entries {
			if in.flights[i].entries[j].s == s {
				in.flights[i].entries[j].s = nil
			}
		}
	}
	s.inflight = 0
}
