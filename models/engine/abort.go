package engine

import "slices"

// Abort ends a sequence wherever it is on the instance — queued, pulling
// remote KV, swapped out, running, or holding finished prefill KV — as
// vLLM's abort_request does: its blocks (and host-tier blocks) are freed,
// it leaves every queue, and it is done here; the caller recycles it. It
// must not be called while a step is in flight. Cost: O(queue or running
// set) to find it.
func (in *Instance) Abort(s *Seq) {
	if in.inStep {
		panic("engine: aborting a sequence while a step is in flight")
	}
	switch s.state {
	case stateWaiting:
		if !in.waiting.remove(s) && !in.ready.remove(s) {
			panic("engine: aborting a waiting sequence that is in no queue")
		}
	case statePulling:
		in.pulling--
		if in.cfg.SharedQueue && !in.waiting.remove(s) {
			panic("engine: aborting a pulling sequence that is not in the waiting queue")
		}
	case stateSwapped:
		in.swapped.remove(s) // its host-tier blocks go with the rest
	case stateRunning:
		in.removeRunning(s)
	case stateHolding:
		in.holding--
	default:
		panic("engine: aborting a sequence that is not on the instance")
	}
	in.forget(s)
	in.unmarkVictim(s)
	in.mem.release(s)
	s.stale = s.stale[:0]
	s.state = stateDone
}

// Settle brings s up to date if it is running and cruises, so that the
// caller may read its fields (Generated, Acct): a cruising sequence's are
// kept relative to the instance's step count (cruise.go). It must not be
// called while a step is in flight. Cost: O(running set) to find it.
func (in *Instance) Settle(s *Seq) {
	if s.state != stateRunning {
		return
	}
	if in.inStep {
		panic("engine: settling a sequence while a step is in flight")
	}
	if pos := slices.Index(in.running, s); pos >= 0 {
		in.settle(pos)
	}
}

// removeRunning takes s out of the running set, keeping the order of the
// rest; a cruising s is brought up to date first.
func (in *Instance) removeRunning(s *Seq) {
	for pos, r := range in.running {
		if r != s {
			continue
		}
		in.settle(pos)
		copy(in.running[pos:], in.running[pos+1:])
		copy(in.due[pos:], in.due[pos+1:])
		copy(in.phase[pos:], in.phase[pos+1:])
		copy(in.trip[pos:], in.trip[pos+1:])
		last := len(in.running) - 1
		in.running[last] = nil
		in.running, in.due, in.phase, in.trip = in.running[:last], in.due[:last], in.phase[:last], in.trip[:last]
		return
	}
	panic("engine: aborting a running sequence that is not in the running set")
}
