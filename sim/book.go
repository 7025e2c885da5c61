package sim

// The router's bookkeeping, as Dynamo's KV router keeps it: the prompt
// tokens it routed to a prefill instance count until that prefill
// finishes, and the request's blocks count on the instance that decodes it
// until it finishes there. Requests the router holds wait here, in order,
// and are offered again whenever that bookkeeping shrinks.

// book records a placement.
func (c *cluster) book(f *flight) {
	f.bookedTokens = f.req.PromptTokens
	c.replicas[f.route.Prefill].prefillTokens += f.bookedTokens
	bs := c.routing.view.BlockSize
	f.bookedBlocks = (f.req.PromptTokens + bs - 1) / bs
	c.replicas[decodingInstance(f)].blocks += f.bookedBlocks
}

// unbookPrefill ends a flight's prefill bookkeeping.
func (c *cluster) unbookPrefill(f *flight) {
	if f.bookedTokens == 0 {
		return
	}
	c.replicas[f.route.Prefill].prefillTokens -= f.bookedTokens
	f.bookedTokens = 0
	c.retryHeld()
}

// unbook ends all of a flight's bookkeeping (it finished, or left its
// decoder).
func (c *cluster) unbook(f *flight) {
	c.replicas[decodingInstance(f)].blocks -= f.bookedBlocks
	f.bookedBlocks = 0
	c.unbookPrefill(f)
	c.retryHeld()
}

func decodingInstance(f *flight) int {
	if f.route.Decode >= 0 {
		return f.route.Decode
	}
	return f.route.Prefill
}

// enqueueRouting offers a flight (new, or refused by a decoder) to the
// router behind any it holds.
func (c *cluster) enqueueRouting(ref int32) {
	if c.flights[ref].phase == phaseRejected {
		c.enter(ref, phaseRouting)
	}
	c.routing.held = append(c.routing.held, ref)
	c.retryHeld()
}

// retryHeld places held flights in order until the router holds one again.
// held[heldFrom:] are waiting, oldest first; the storage is reused once
// they are all placed, and compacted under a long backlog.
func (c *cluster) retryHeld() {
	r := &c.routing
	for r.heldFrom < len(r.held) && !c.placing {
		c.placing = true
		placed := c.place(r.held[r.heldFrom])
		c.placing = false
		if !placed {
			return
		}
		if r.heldFrom++; r.heldFrom == len(r.held) {
			r.held, r.heldFrom = r.held[:0], 0
		} else if r.heldFrom >= 1024 && 2*r.heldFrom >= len(r.held) { // a long backlog: reclaim its placed part
			r.held, r.heldFrom = r.held[:copy(r.held, r.held[r.heldFrom:])], 0
		}
	}
}
