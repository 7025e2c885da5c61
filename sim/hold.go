package sim

// Hold timeouts. A prefill instance frees the KV a decoder has not pulled
// KVHoldTimeoutNs after the prefill ended. The timeout is the same for
// every request on an instance, so each instance keeps its deadlines in a
// deadlineQueue (deadlines.go) with one timeout event queued at most.

// holdUntil records that flight ref's KV on prefill instance p is freed at
// atNs unless pulled before.
func (c *cluster) holdUntil(p int, ref int32, atNs int64) {
	c.flights[ref].deadlineNs = atNs
	if c.replicas[p].hold.add(deadline{ref: ref, atNs: atNs}) {
		c.q.push(atNs, classTimeout, int32(p))
	}
}

// holding reports whether entry e's flight still holds its KV on p,
// waiting for that deadline.
func (c *cluster) holding(p int, e deadline) bool {
	f := &c.flights[e.ref]
	return f.phase == phaseHolding && f.deadlineNs == e.atNs && f.route.Prefill == p
}

// dropPulled discards the deadlines at the head of p's queue whose KV was
// pulled (or whose flight moved on) and returns the queue.
func (c *cluster) dropPulled(p int) *deadlineQueue {
	h := &c.replicas[p].hold
	h.dropMoot(func(e deadline) bool { return c.holding(p, e) })
	return h
}

// holdSuperseded reports whether p's timeout event due at atNs is moot:
// every deadline it stood for was pulled meanwhile. The event moves to
// the next deadline that may still apply, if any.
func (c *cluster) holdSuperseded(p int, atNs int64) bool {
	moot, next, ok := c.dropPulled(p).superseded(atNs)
	if ok {
		c.q.push(next, classTimeout, int32(p))
	}
	return moot
}

// onHoldTimeouts frees the KV prefill instance p has held past its
// deadline for decoders that never pulled it (they will compute the prompt
// themselves), and arms the next deadline.
func (c *cluster) onHoldTimeouts(p int) {
	h := c.dropPulled(p)
	for e, ok := h.due(c.nowNs); ok; e, ok = h.due(c.nowNs) {
		c.onHoldTimeout(e.ref)
		h = c.dropPulled(p)
	}
	if at, ok := h.rearm(); ok {
		c.q.push(at, classTimeout, int32(p))
	}
	c.kickSoon(p)
}
