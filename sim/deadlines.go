package sim

// Deadline queues. A timeout that is the same for every request of a kind
// (a prefill instance's KV hold, the client's patience) gives deadlines
// that come in order, so each kind keeps them in a FIFO with at most one
// event queued, for the earliest deadline that may still apply, instead of
// one event per request: most deadlines never come due (the KV is pulled,
// the response ends), and a queued event whose deadline went moot moves
// to the next one without running (cluster.superseded).

// deadline is one flight's deadline: its slot, the request it carried
// when the deadline was set (a slot is reused once its flight ends), and
// when.
type deadline struct {
	ref  int32
	id   int64
	atNs int64
}

// deadlineQueue is one kind's deadlines, oldest first, from head on.
type deadlineQueue struct {
	q     []deadline
	head  int
	armed bool // an event is queued for q[head]
}

// add appends d and reports whether an event must be queued for it: the
// queue had none armed.
func (h *deadlineQueue) add(d deadline) bool {
	h.q = append(h.q, d)
	if h.armed {
		return false
	}
	h.armed = true
	return true
}

// dropMoot discards the deadlines at the head that live says no longer
// apply, and compacts the queue once most of it is behind the head.
func (h *deadlineQueue) dropMoot(live func(deadline) bool) {
	for h.head < len(h.q) && !live(h.q[h.head]) {
		h.head++
	}
	if h.head == len(h.q) {
		h.q, h.head = h.q[:0], 0
	} else if h.head >= 1024 && 2*h.head >= len(h.q) {
		h.q, h.head = h.q[:copy(h.q, h.q[h.head:])], 0
	}
}

// due pops the head deadline if it is due by nowNs (after dropMoot).
func (h *deadlineQueue) due(nowNs int64) (deadline, bool) {
	if h.head == len(h.q) || h.q[h.head].atNs > nowNs {
		return deadline{}, false
	}
	h.head++
	return h.q[h.head-1], true
}

// rearm reports the deadline the next event is for, if any, and records
// whether one is armed.
func (h *deadlineQueue) rearm() (atNs int64, ok bool) {
	if h.armed = h.head < len(h.q); h.armed {
		return h.q[h.head].atNs, true
	}
	return 0, false
}

// superseded reports whether the event due at atNs is moot (after
// dropMoot), and if so the deadline it moves to (ok false: none, the queue
// is disarmed).
func (h *deadlineQueue) superseded(atNs int64) (moot bool, nextNs int64, ok bool) {
	switch {
	case h.head == len(h.q):
		h.armed = false
		return true, 0, false
	case h.q[h.head].atNs > atNs:
		return true, h.q[h.head].atNs, true
	}
	return false, 0, false
}
