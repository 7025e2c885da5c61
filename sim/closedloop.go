package sim

// A closed-loop client (Client.Concurrency > 0) is N users, each sending
// its next request when its previous one ends, as public serving
// benchmarks run: vLLM's `vllm bench serve --max-concurrency N` with
// --request-rate inf creates every request's task at once and an
// asyncio.Semaphore(N) admits N of them; a slot is released when the
// request function returns — after the whole streamed response, or its
// error or timeout (vllm/benchmarks/serve.py, benchmark():
// limited_request_func). The semaphore is FIFO, so the requests go out
// in the dataset's order.
//
// Here, at t = 0 the first N requests arrive; whenever a request ends —
// completed, rejected, dropped, failed or abandoned, at the instant its
// client sees the end (Record.FinishNs) — its user sends the next request
// from the source Client.ThinkNs later (vLLM has no think time: 0), until
// Client.Requests have been sent or the source is exhausted. The source
// supplies lengths and prefixes in its order; its arrival times are
// ignored. A send is an arrival event (classArrival); the request it
// carries is read from the source when the event fires, so requests are
// numbered densely in arrival order however the users interleave. One
// deviation: a request the client gave up on while it could not be
// aborted (KV on the wire, an instance inside a step; see abandon) ends
// at its deadline, but its user's next send is not scheduled before the
// simulator gets to abort it, a step or a transfer later.

// closedLoop is a closed-loop client's state.
type closedLoop struct {
	sent      int64 // sends scheduled, Client.Requests at most
	exhausted bool  // the source has no more requests
}

// closed reports whether the client is a closed loop.
func (c *cluster) closed() bool { return c.cfg.Client.Concurrency > 0 }

// startLoop schedules the users' first sends, all at t = 0.
func (c *cluster) startLoop() {
	for range c.cfg.Client.Concurrency {
		c.send(0)
	}
}

// userNext schedules the next send of the user whose request ended, as
// its client sees it, at endNs: think time later, and not in the past.
func (c *cluster) userNext(endNs int64) {
	c.send(max(c.nowNs, endNs+c.cfg.Client.ThinkNs))
}

// send schedules one user's request to arrive at atNs, unless the client
// has sent all it will.
func (c *cluster) send(atNs int64) {
	if n := c.cfg.Client.Requests; c.loop.exhausted || n > 0 && c.loop.sent >= n {
		return
	}
	c.loop.sent++
	c.pushArrival(atNs, 0)
}

// sendSuperseded reads the request a send due at atNs carries into
// c.next, stamped with that arrival time. It reports true — the event is
// moot and does not advance the clock — when the source is exhausted or
// fails (c.err is then set).
func (c *cluster) sendSuperseded(atNs int64) bool {
	if c.loop.exhausted {
		return true
	}
	ok, err := c.cfg.Source.Next(&c.next)
	switch {
	case err != nil:
		c.err = err
	case !ok:
		c.loop.exhausted = true
	default:
		c.next.ArrivalNs = atNs
		c.err = c.checkNext()
		return c.err != nil
	}
	return true
}
