package sim

// Hold timeouts. A prefill instance frees the KV a decoder has not pulled
// KVHoldTimeoutNs after the prefill ended. The timeout is the same for
// every request on an instance, so its deadlines come in order: each
// instance keeps them in a FIFO and has at most one timeout event queued,
// for the earliest that may still apply, instead of one per request (most
// KV is pulled long before its deadline).

// holdEntry is one held prefill's deadline.
type holdEntry struct {
	ref  int32
	atNs int64
}

// holdQueue is an instance's deadlines, oldest first, from head on.
type holdQueue struct {
	q     []holdEntry
	head  int
	armed bool // a timeout event is queued for q[head]
}

// holdUntil records that flight ref's KV on prefill instance p is freed at
// atNs unless pulled before.
func (c *cluster) holdUntil(p int, ref int32, atNs int64) {
	c.flights[ref].deadlineNs = atNs
	h := &c.replicas[p].hold
	h.q = append(h.q, holdEntry{ref, atNs})
	if !h.armed {
		h.armed = true
		c.q.push(atNs, classTimeout, int32(p))
	}
}

// holding reports whether entry e's flight still holds its KV on p,
// waiting for that deadline.
func (c *cluster) holding(p int, e holdEntry) bool {
	f := &c.flights[e.ref]
	return f.phase == phaseHolding && f.deadlineNs == e.atNs && f.route.Prefill == p
}

// dropPulled discards the deadlines at the head of p's queue whose KV was
// pulled (or whose flight moved on) and returns the queue.
func (c *cluster) dropPulled(p int) *holdQueue {
	h := &c.replicas[p].hold
	for h.head < len(h.q) && !c.holding(p, h.q[h.head]) {
		h.head++
	}
	if h.head == len(h.q) {
		h.q, h.head = h.q[:0], 0
	} else if h.head >= 1024 && 2*h.head >= len(h.q) {
		h.q, h.head = h.q[:copy(h.q, h.q[h.head:])], 0
	}
	return h
}

// holdSuperseded reports whether p's timeout event due at atNs is moot:
// every deadline it stood for was pulled meanwhile. The event moves to
// the next deadline that may still apply, if any.
func (c *cluster) holdSuperseded(p int, atNs int64) bool {
	h := c.dropPulled(p)
	switch {
	case h.head == len(h.q):
		h.armed = false
	case h.q[h.head].atNs > atNs:
		c.q.push(h.q[h.head].atNs, classTimeout, int32(p))
	default:
		return false
	}
	return true
}

// onHoldTimeouts frees the KV prefill instance p has held past its
// deadline for decoders that never pulled it (they will compute the prompt
// themselves), and arms the next deadline.
func (c *cluster) onHoldTimeouts(p int) {
	h := c.dropPulled(p)
	for h.head < len(h.q) && h.q[h.head].atNs <= c.nowNs {
		c.onHoldTimeout(h.q[h.head].ref)
		h.head++
		h = c.dropPulled(p)
	}
	if h.armed = h.head < len(h.q); h.armed {
		c.q.push(h.q[h.head].atNs, classTimeout, int32(p))
	}
	c.kickSoon(p)
}
