package engine

// Why sequences wait for admission.
//
// Every scheduling pass that leaves sequences in the waiting (or ready)
// queue stopped for a reason: the running set is full (max_num_seqs), the
// head cannot get KV blocks (or swapped-out sequences, which come first,
// cannot), or the step's token budget is spent. Until the next pass,
// every sequence in the queue waits for that reason; a pass that admits
// everyone leaves later arrivals waiting only for the step in flight to
// end (busy). The instance keeps the time it has spent in each cause as
// running totals, and a sequence the totals when it joins the queue, so
// that what it waited for each cause is the difference when it leaves:
// O(1) per sequence, nothing per step beyond one subtraction.
//
// Re-prefills after a preemption are not split: their wait is recovery
// (AcctReprefill), not queueing. A running sequence the token budget
// leaves out of a step is not in the queue either; its wait stays in the
// queue time the split does not reach.

// WaitCause is why a queued sequence was not admitted.
type WaitCause uint8

// The wait causes.
const (
	WaitBusy    WaitCause = iota // a step was in flight: the next pass had not come
	WaitMaxSeqs                  // the running set was full (max_num_seqs)
	WaitKV                       // no KV blocks for the head (or for the swapped-out sequences ahead of it)
	WaitBudget                   // the step's token budget was spent
	NumWaitCauses
)

// WaitNames are the causes' names in reports, indexed by WaitCause.
var WaitNames = [NumWaitCauses]string{"busy", "max_num_seqs", "kv_blocks", "token_budget"}

// Waits is time by wait cause, in nanoseconds.
type Waits [NumWaitCauses]int64

// settleWaits charges the time since the cause last changed to it.
func (in *Instance) settleWaits(nowNs int64) {
	in.waitNs[in.waitCause] += nowNs - in.waitSince
	in.waitSince = nowNs
}

// setWaitCause records, at the end of a pass, why the sequences it left
// queued wait: the reason admission stopped, or busy when none is left.
func (in *Instance) setWaitCause() {
	if in.queued() == 0 {
		in.stop = WaitBusy
	}
	in.waitCause, in.stop = in.stop, WaitBusy
}

// WaitTotals is the time the instance has spent in each wait cause, up
// to its last scheduling pass: the difference of two readings says what
// stopped its admission between them.
func (in *Instance) WaitTotals() Waits { return in.waitNs }

// queued is how many sequences wait for admission in the queues.
func (in *Instance) queued() int {
	n := in.waiting.len() + in.ready.len()
	if in.cfg.SharedQueue {
		n -= in.pulling
	}
	return n
}

// joinQueue notes that s starts waiting for admission at nowNs.
func (in *Instance) joinQueue(s *Seq, nowNs int64) {
	in.settleWaits(nowNs)
	s.waitSnap = in.waitNs
}

// WaitFrom restarts the wait of s, queued here, at nowNs: what it waited
// before does not count (a decoder handed a streamed request before its
// prefill ended waited beside the prefill, off the request's path). It
// does nothing to a sequence not in the queue.
func (in *Instance) WaitFrom(s *Seq, nowNs int64) {
	if s.state == stateWaiting {
		in.joinQueue(s, nowNs)
	}
}

// leaveQueue adds what s waited for each cause since it joined the queue
// to its Wait and to the instance's totals. The caller has settled the
// totals to now (every pass begins so).
func (in *Instance) leaveQueue(s *Seq) {
	if s.reprefill {
		return
	}
	for c := range s.Wait {
		d := in.waitNs[c] - s.waitSnap[c]
		s.Wait[c] += d
		in.stats.Waits[c] += d
	}
}

// stopFor records why admission stopped, unless an earlier reason in the
// pass already did.
func (in *Instance) stopFor(c WaitCause) {
	if in.stop == WaitBusy {
		in.stop = c
	}
}

// stopReason is why an admission loop ended with sequences still queued,
// once it has tried the head: the running set full, the budget spent, or
// (ok false) the head's blocks.
func (in *Instance) stopReason(budget int, ok bool) {
	switch {
	case len(in.running) >= in.cfg.MaxSeqs:
		in.stopFor(WaitMaxSeqs)
	case budget <= 0:
		in.stopFor(WaitBudget)
	case !ok:
		in.stopFor(WaitKV)
	}
}
