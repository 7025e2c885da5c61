package sim

import (
	"sort"

	"handoff/models/router"
	"handoff/results"
)

// The order of the requests a router holds, and when they are offered
// again. A router that orders its queue (router.Queuer: llm-d's flow
// control, by priority band) has each held request inserted behind those
// whose key is at most its own, so that the first held is always the one
// it would dispatch first; retryHeld offers them in that order until one
// is held again, as a gate that holds the whole pool does. A router that
// holds on the state its views copy from the instances (router.Poller)
// sees that state change without routed work finishing, the only other
// time held requests are offered again: the core offers them again at the
// next refresh of the views, and at least PollNs later.

// classPoll orders a router's poll after everything else due at the same
// instant: it sees the cluster as of the end of that instant.
const classPoll = classFleet + 1

// initHeldOrder finds whether the router orders or polls its held
// requests.
func (c *cluster) initHeldOrder() {
	r := &c.routing
	if q, ok := c.cfg.Router.(router.Queuer); ok && q.Queues() {
		r.queuer = q
	}
	if p, ok := c.cfg.Router.(router.Poller); ok {
		r.pollNs = p.PollNs()
	}
}

// queueKey is flight ref's place in an ordering router's queue.
func (c *cluster) queueKey(ref int32) int64 {
	f := c.flights.at(ref)
	rq := router.Request{ID: f.req.ID, Priority: c.priority(&f.req)}
	return c.routing.queuer.QueueKey(&rq)
}

// priority is r's traffic class's priority (0 without classes).
func (c *cluster) priority(r *Request) int {
	if len(c.cfg.Priorities) == 0 {
		return 0
	}
	return int(c.cfg.Priorities[r.Class])
}

// hold appends flight ref to the held requests, or, for an ordering
// router, inserts it behind those with keys at most its own — never ahead
// of the one being placed now.
func (c *cluster) hold(ref int32) {
	r := &c.routing
	if r.queuer == nil {
		r.held = append(r.held, ref)
		return
	}
	key := c.queueKey(ref)
	from := r.heldFrom
	if c.placing {
		from++ // held[heldFrom] is being placed: it leaves first
	}
	n := len(r.held)
	at := from + sort.Search(n-from, func(k int) bool { return r.heldKeys[from+k] > key })
	r.held = append(r.held, 0)
	r.heldKeys = append(r.heldKeys, 0)
	copy(r.held[at+1:], r.held[at:n])
	copy(r.heldKeys[at+1:], r.heldKeys[at:n])
	r.held[at], r.heldKeys[at] = ref, key
}

// compactHeld drops the placed part of the held requests, keys too.
func (c *cluster) compactHeld() {
	r := &c.routing
	n := copy(r.held, r.held[r.heldFrom:])
	r.held = r.held[:n]
	if r.queuer != nil {
		r.heldKeys = r.heldKeys[:copy(r.heldKeys, r.heldKeys[r.heldFrom:])]
	}
	r.heldFrom = 0
}

// pollLater schedules the router's next offer of its held requests, for a
// router that polls: at the next refresh of its views, and at least
// PollNs from now; none while one is pending.
func (c *cluster) pollLater() {
	r := &c.routing
	if r.pollNs == 0 || r.pollPending || r.polling && c.q.len() == 0 {
		return // a poll found nothing else due: the cluster cannot change any more (checkEnd reports the held)
	}
	at := max(c.nowNs+r.pollNs, r.lastRefreshNs+c.cfg.RefreshIntervalNs)
	r.pollPending = true
	c.q.push(at, classPoll, 0)
}

// onPoll offers the held requests again.
func (c *cluster) onPoll() {
	r := &c.routing
	r.pollPending, r.polling = false, true
	c.retryHeld()
	r.polling = false
}

// dropHeld ends, once nothing else is due, the requests a polling router
// still holds: its gate (llm-d's flow control) reads a pool that nothing
// can change any more, saturated, say, by KV a crash stranded on a
// prefiller, and would hold them for ever. llm-d's request TTL, not
// modelled, would evict them; here they end dropped, with the reason.
func (c *cluster) dropHeld() {
	r := &c.routing
	if r.pollNs == 0 {
		return
	}
	for _, ref := range r.held[r.heldFrom:] {
		if c.flights.at(ref).phase != phaseDone {
			c.endFlight(ref, results.Dropped, "dropped: held by the router's flow control with nothing left to change its pool's saturation")
		}
	}
	c.retryHeld() // frees the slots of the flights just ended
}
