package sim

import "handoff/results"

// Client timeouts. A client gives up on a request Client.TimeoutNs after
// its arrival if the response has not ended, or Client.FirstTokenTimeoutNs
// after it if no token has come; the server then aborts it and frees its
// KV. In vLLM the API server sees the client disconnect and cancels the
// request's generator (entrypoints/openai/serving_completion.py,
// serving_chat.py), AsyncLLM.abort sends the abort to the engine core
// (v1/engine/async_llm.py, v1/engine/core_client.py), and the engine core
// finishes it as FINISHED_ABORTED, which frees its blocks
// (v1/engine/core.py abort_requests, v1/core/sched/scheduler.py
// finish_requests). Each timeout is the same for every request, so its
// deadlines come in arrival order: each kind has a deadlineQueue
// (deadlines.go) with at most one event queued.

// The client's two deadlines, the arg of their classClient events.
const (
	deadlineTotal = iota
	deadlineFirstToken
	numDeadlines
)

var deadlineReasons = [numDeadlines]string{"client timeout", "first-token timeout"}

// clientState is the client's deadlines, and the flights ended that
// could not be aborted at once (their KV on the wire, or one of their
// instances inside a step) — given up on by their clients, or failed by a
// lock-up's watchdog (lockup.go): their records close when they are
// aborted.
type clientState struct {
	queues  [numDeadlines]deadlineQueue
	pending []pendingAbort
}

// pendingAbort is a flight ended at atNs, with a status and a reason,
// that could not be aborted then.
type pendingAbort struct {
	deadline
	status results.Status
	reason string
}

// timeoutNs is the client's timeout of kind k (0: none).
func (c *cluster) timeoutNs(k int) int64 {
	if k == deadlineTotal {
		return c.cfg.Client.TimeoutNs
	}
	return c.cfg.Client.FirstTokenTimeoutNs
}

// expectClient records the client's deadlines for the new flight ref.
func (c *cluster) expectClient(ref int32) {
	if !c.cfg.Client.timeouts() {
		return
	}
	r := c.flights.at(ref).req
	for k := range numDeadlines {
		t := c.timeoutNs(k)
		if t == 0 {
			continue
		}
		if c.client.queues[k].add(deadline{ref, r.ID, r.ArrivalNs + t}) {
			c.q.push(r.ArrivalNs+t, classClient, int32(k))
		}
	}
}

// waiting reports whether entry e of deadline kind k may still apply: its
// flight is live and, for the first token, the client has not seen one.
func (c *cluster) waiting(k int, e deadline) bool {
	f := c.flights.at(e.ref)
	if f.phase == phaseDone || f.req.ID != e.id {
		return false
	}
	first := c.record(e.id).FirstTokenNs
	return k == deadlineTotal || first == 0 || first > e.atNs
}

// dropMoot discards the entries at the head of queue k that no longer
// apply and returns the queue.
func (c *cluster) dropMoot(k int) *deadlineQueue {
	h := &c.client.queues[k]
	h.dropMoot(func(e deadline) bool { return c.waiting(k, e) })
	return h
}

// clientSuperseded reports whether the deadline event of kind k due at
// atNs is moot; the event moves to the next deadline that may apply.
func (c *cluster) clientSuperseded(k int, atNs int64) bool {
	moot, next, ok := c.dropMoot(k).superseded(atNs)
	if ok {
		c.q.push(next, classClient, int32(k))
	}
	return moot
}

// onClientTimeouts abandons the requests whose deadline of kind k is due,
// and arms the next deadline.
func (c *cluster) onClientTimeouts(k int) {
	h := c.dropMoot(k)
	for e, ok := h.due(c.nowNs); ok; e, ok = h.due(c.nowNs) {
		c.abandon(e, k)
		h = c.dropMoot(k)
	}
	if at, ok := h.rearm(); ok {
		c.q.push(at, classClient, int32(k))
	}
}

// abandon aborts the flight of entry e, whose client gave up at its
// deadline, now or, if it cannot be aborted now, as soon as it can.
func (c *cluster) abandon(e deadline, k int) {
	if f := c.flights.at(e.ref); !c.abortable(f) {
		c.pendAbort(pendingAbort{e, results.Abandoned, deadlineReasons[k]})
		return
	}
	c.endFlightAt(e.ref, results.Abandoned, deadlineReasons[k], e.atNs)
}

// pendAbort queues abort p, which cannot be done now, to be retried at
// every step's end; the first to wait ends every instance's run
// (steprun.go), so that each step's end — not only those of the
// instances holding its flight — is an event to retry at.
func (c *cluster) pendAbort(p pendingAbort) {
	if len(c.client.pending) == 0 {
		c.endAllRuns()
	}
	c.client.pending = append(c.client.pending, p)
}

// retryAbandons aborts the flights given up on (or failed by a lock-up's
// watchdog) that can be aborted now.
func (c *cluster) retryAbandons() {
	p := &c.client
	kept := 0
	for _, e := range p.pending {
		switch f := c.flights.at(e.ref); {
		case f.phase == phaseDone || f.req.ID != e.id: // ended meanwhile (see clientVerdict)
		case c.abortable(f):
			c.endFlightAt(e.ref, e.status, e.reason, e.atNs)
		default:
			p.pending[kept] = e
			kept++
		}
	}
	p.pending = p.pending[:kept]
}

// clientVerdict is how a request that ends at endNs (as its client would
// see it) ends for its client: abandoned at its earliest deadline that
// passed first, or as it is.
func (c *cluster) clientVerdict(rec *results.Record, endNs int64) (abandoned bool, reason string, atNs int64) {
	atNs = endNs
	if t := c.cfg.Client.TimeoutNs; t > 0 && endNs > rec.ArrivalNs+t {
		abandoned, reason, atNs = true, deadlineReasons[deadlineTotal], rec.ArrivalNs+t
	}
	t := c.cfg.Client.FirstTokenTimeoutNs
	if d := rec.ArrivalNs + t; t > 0 && d < atNs && (rec.FirstTokenNs == 0 || rec.FirstTokenNs > d) {
		abandoned, reason, atNs = true, deadlineReasons[deadlineFirstToken], d
	}
	return abandoned, reason, atNs
}

// output is what a request's attempts generated by its end: tokens in all
// (those the client saw from earlier attempts included), when the last of
// them was sampled, and how much later each reaches the client (its
// decoder's FirstEmitNs).
type output struct {
	tokens         int
	lastNs, emitNs int64
}

// seen is how many of out's tokens the client of ended record rec
// received: all of them, unless it gave up — then none if the first token
// had not reached it by then, or all but the last if that one would have
// reached it only after its deadline (a token before the last within the
// emission of the deadline, possible only when a step is shorter than the
// emission, is counted as received). Tokens the server generated after
// its client gave up are not output.
func (out output) seen(rec *results.Record) int {
	switch {
	case rec.Status != results.Abandoned:
		return out.tokens
	case rec.FirstTokenNs == 0:
		return 0
	case out.tokens > 1 && out.lastNs+out.emitNs > rec.FinishNs:
		return out.tokens - 1
	}
	return out.tokens
}

// settleTime makes the time components of a request that did not complete
// split its life as its client saw it, from its arrival to its end: the
// TTFT components its TTFT when it had a first token, and all of them
// FinishNs − ArrivalNs. Its end had no emission of its own, so the first
// token's, subtracted from emit at the first token, is not: emit starts at
// 0, and when that first token never reached the client, its way back is
// out of the front end's time too. The server's time on it past its end —
// a step or a transfer in flight when its client gave up, and the
// engine's lead over the client by the first token's emission — is taken
// off its components from the last in the journey's order back, which is
// where that time went but for the order of the decode's components. Time
// short of its end is a response the engine finished that was still on
// its way to a client that gave up first: emit.
func settleTime(rec *results.Record) {
	emit := -rec.Time[results.TEmit]
	rec.Time[results.TEmit] = 0
	if rec.FirstTokenNs == 0 {
		rec.Time[results.TFrontend] -= emit
	}
	over := -(rec.FinishNs - rec.ArrivalNs)
	for _, ns := range rec.Time {
		over += ns
	}
	for k := results.NumTimes - 1; k >= 0 && over > 0; k-- {
		cut := min(over, rec.Time[k])
		rec.Time[k] -= cut
		over -= cut
	}
	rec.Time[results.TEmit] -= over
}
