package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// pushArrival queues an arrival event (a source's next request, a
// closed loop's send, a session's next turn) and counts it: while none is
// queued and every request has ended, nothing can bring new work.
func (c *cluster) pushArrival(atNs int64, arg int32) {
	c.arrivals++
	c.q.push(atNs, classArrival, arg)
}

// pullArrival reads the next request from the source and schedules its
// arrival.
func (c *cluster) pullArrival() {
	last := c.next.ArrivalNs
	ok, err := c.cfg.Source.Next(&c.next)
	switch {
	case err != nil:
		c.err = err
	case !ok:
	case c.next.ArrivalNs < last:
		c.err = fmt.Errorf("sim: source went back in time (%d ns after %d ns)", c.next.ArrivalNs, last)
	default:
		if c.err = c.checkNext(); c.err == nil {
			c.pushArrival(c.next.ArrivalNs, 0)
		}
	}
}

// checkNext checks the lengths of the request read from the source.
func (c *cluster) checkNext() error { return c.checkRequest(&c.next) }

// checkRequest checks the lengths of a request read from the source, and
// that a turn of a session comes from a source that can say what follows
// it (a wrapper that hides NextTurn would otherwise leave the session
// nowhere to go when the turn ends).
func (c *cluster) checkRequest(r *Request) error {
	return checkRequest(c.cfg, c.recs.next, r, c.sessions.src != nil)
}

// checkRequest checks request id of a run of cfg, read from a source that
// yields sessions or not (cluster.checkRequest; a split run's reader,
// split.go).
func checkRequest(cfg *Config, id int64, r *Request, sessions bool) error {
	switch {
	case prefixTokens(r.Prefix) > r.PromptTokens || r.PromptTokens < 1 || r.OutputTokens < 1:
		return fmt.Errorf("sim: request %d has %d prompt tokens (%d in its prefix segments) and %d output tokens",
			id, r.PromptTokens, prefixTokens(r.Prefix), r.OutputTokens)
	case int(r.Class) >= max(1, len(cfg.Priorities)):
		return fmt.Errorf("sim: request %d is of class %d, but the run has %d", id, r.Class, max(1, len(cfg.Priorities)))
	case r.Turn > 0 && !sessions:
		return fmt.Errorf("sim: request %d is turn %d of session %d, but the source yields no sessions (it is no SessionSource)",
			id, r.Turn, r.Session)
	}
	return nil
}

// onArrival routes the pending request — the source's next, or with arg > 0
// a session's turn (sessions.go) — or drops it if no instance can hold it,
// then reads the next one (in a closed loop, the next send reads it).
func (c *cluster) onArrival(arg int32) {
	var r Request
	if arg > 0 {
		r = c.takeTurn(arg)
	} else {
		r = c.next
	}
	r.ID = c.recs.next
	c.recs.add(results.Record{ID: r.ID, ArrivalNs: r.ArrivalNs,
		PromptTokens: int32(r.PromptTokens), OutputTokens: int32(r.OutputTokens),
		PrefillInstance: -1, DecodeInstance: -1, Session: r.Session, Turn: r.Turn, Class: r.Class})
	switch reason := c.tooLong(&r); {
	case reason != "":
		c.drop(r.ID, reason)
	case c.cfg.Frontend != (Frontend{}):
		ref := c.newFlight(&r, phaseFrontend)
		c.q.push(c.nowNs+c.cfg.Frontend.delayNs(r.PromptTokens), classFrontend, ref)
		c.expectClient(ref)
	default:
		c.expectClient(c.enqueueNew(&r))
	}
	if arg == 0 && !c.closed() {
		c.pullArrival()
	}
}

// enqueueNew offers a new request to the router and returns its flight.
func (c *cluster) enqueueNew(r *Request) int32 {
	ref := c.newFlight(r, phaseRouting)
	c.enqueueRouting(ref)
	return ref
}

// onFrontendDone hands a request the front end has tokenized to the
// router, unless its client has given up meanwhile.
func (c *cluster) onFrontendDone(ref int32) {
	if c.flights.at(ref).phase == phaseDone {
		c.free(ref) // abandoned in the front end: the slot waited for this event
		return
	}
	c.enter(ref, phaseRouting)
	c.enqueueRouting(ref)
}

// rejectedByRouter is the reason a request the router refused ends with
// when the router gives none.
const rejectedByRouter = "rejected by the router"

// place routes the flight's current attempt and enqueues it on its prefill
// instance. It reports false when the router holds the request.
func (c *cluster) place(ref int32) bool {
	f := c.flights.at(ref)
	r := &f.req
	c.refreshViews()
	var d router.Decision
	if c.fleet != nil && c.noCandidates() {
		d.Prefill = -1 // no instance to send it to: held until one is ready
	} else {
		d = c.cfg.Router.Route(c.routeRequest(r), &c.routing.view)
	}
	if d.IsRejected() { // admission control at the router: never served
		c.enter(ref, phaseDone)
		reason := d.Reason
		if reason == "" {
			reason = rejectedByRouter
		}
		c.closeRecord(r.ID, results.Rejected, reason, output{})
		c.free(ref)
		return true
	}
	if d.Held() {
		if f.phase != phaseHeld {
			c.enter(ref, phaseHeld)
		}
		c.pollLater()
		return false
	}
	if c.groups != nil {
		d.Prefill, d.Decode = c.balanceRank(d.Prefill), c.balanceRank(d.Decode)
	}
	if reason := c.doesNotFit(r, d); reason != "" {
		c.enter(ref, phaseDone)
		c.drop(r.ID, reason)
		c.free(ref)
		return true
	}
	c.startAttempt(ref, d)
	return true
}

// startAttempt enqueues flight ref's attempt on the instance that runs its
// prompt under decision d — or, to a decode-first decoder, on that
// decoder, to be served whole unless it refuses it (decodefirst.go).
func (c *cluster) startAttempt(ref int32, d router.Decision) {
	route, threshold := c.decodeFirst(c.flights.at(ref), d)
	c.enqueueAttempt(ref, route, threshold)
}

// enqueueAttempt enqueues flight ref's attempt under decision d, admitted
// on its first instance at the cache-hit threshold given (0: none).
func (c *cluster) enqueueAttempt(ref int32, d router.Decision, threshold float64) {
	f := c.flights.at(ref)
	r := &f.req
	f.route = d
	f.viaStore, f.storeNs = false, 0 // per attempt: a streamed pull starts before the prefill ends
	f.deadlineNs, f.srcGone = 0, false
	c.book(ref)
	rec := c.record(r.ID)
	rec.PrefillInstance, rec.DecodeInstance = int32(f.route.Prefill), int32(f.route.Decode)
	p := &c.replicas[f.route.Prefill]
	c.touch(f.route.Prefill)
	s := p.eng.NewSeq()
	c.fillSeq(s, ref, r)
	s.Hold = !f.local()
	s.AdmitHitThreshold = threshold
	if s.Hold {
		s.MaxNew = 1 // a prefill instance samples one token, which the client never sees
	} else {
		f.dseq = s // it decodes where it prefills
	}
	f.pseq = s
	c.enter(ref, phasePrefilling)
	p.outstanding++
	c.loadChanged(f.route.Prefill)
	p.eng.Enqueue(s, c.nowNs)
	c.kickSoon(f.route.Prefill)
}

func (c *cluster) fillSeq(s *engine.Seq, ref int32, r *Request) {
	s.Ref = ref
	s.Prefix, s.Output = r.Prefix, r.Output
	s.UniqueID = uint64(r.ID) + 1
	if c.cfg.shard { // its content is keyed by the whole run's ID, which the shard's router knows (split.go)
		s.UniqueID = uint64(c.cfg.Router.(*pinned).routedID) + 1
	}
	s.PromptTokens = r.PromptTokens
	s.MaxNew = r.OutputTokens
	if len(c.cfg.Priorities) > 0 {
		s.Priority = c.cfg.Priorities[r.Class]
	}
}

// onStep applies a finished step and starts the next one.
func (c *cluster) onStep(i int) {
	rp := &c.replicas[i]
	c.finishRun(i)
	startNs, busyFromNs := rp.stepStartNs, rp.stepStartNs
	if rp.pipe != nil {
		startNs, busyFromNs = c.completeMicro(i)
	}
	res := rp.eng.Complete(startNs, c.nowNs)
	rp.busyNs += c.nowNs - busyFromNs
	c.recordGaps(res.TokenGapsNs)
	if res.SteadyTokens > 0 {
		c.itl.AddN(res.SteadyGapNs, int64(res.SteadyTokens))
	}
	c.progress(i, len(res.TokenGapsNs)+res.SteadyTokens+res.DraftedTokens+len(res.FirstTokens)-len(res.Recovered))
	if c.cfg.Tracer != nil {
		c.traceRecovered(i, res.Recovered) // recomputed
	}
	c.noteVictims(i)
	// Handling the results may place a held request on this very instance;
	// planning it now would overwrite the results being handled.
	c.completing = i
	prefillRole := rp.cfg.Role == RolePrefill
	if !prefillRole {
		for _, s := range res.FirstTokens {
			c.firstToken(i, s)
		}
	}
	for _, s := range res.Finished {
		if prefillRole {
			c.prefillDone(i, s)
		} else {
			c.complete(i, s)
		}
	}
	c.completing = -1
	if rp.abortAfterStep { // unless this step made progress after all
		if rp.abortAfterStep = false; c.nowNs-rp.metrics.progressNs >= c.cfg.LockupAbortNs {
			c.abortLocked(i)
		} else {
			c.watch(i)
		}
	}
	if c.fleet != nil && len(c.fleet.pending) > 0 {
		c.retryFailovers()
	}
	if len(c.client.pending) > 0 {
		c.retryAbandons()
	}
	c.stepHandled(i)
	c.kickSoon(i)
}

// prefillDone handles a prefill that finished on instance p: the decoder is
// handed the request (unless streaming already did) and the KV is held
// until pulled (or its timeout).
func (c *cluster) prefillDone(p int, ps *engine.Seq) {
	ref := ps.Ref
	f := c.flights.at(ref)
	if f.phase == phaseFailover {
		return // its decoder crashed: it goes again once off this instance (failover.go)
	}
	c.unbookPrefill(f)
	if !c.chooseDecoder(ref) {
		c.failOver(ref, p)
		return
	}
	// A decoder chosen after the prefill (now, or when its last step
	// began) may be too small; it has not been handed the request then.
	if reason := c.doesNotFitDecoder(&f.req, f.route.Decode); f.dseq == nil && reason != "" {
		c.refusedBeforeAdmission(ref, reason)
		return
	}
	switch f.phase {
	case phaseStreamed: // streamed, and the transfer already finished
		c.transferred(ref)
		c.kickSoon(f.route.Decode)
		return
	case phaseStreaming:
		c.enter(ref, phaseTransferring)
		c.armHold(p, ref)
		return
	}
	var relayNs int64
	if f.dseq == nil { // else handed over while streaming: its wait counts from now
		relayNs = c.relayNs(p, f)
	} else {
		c.touch(f.route.Decode).WaitFrom(f.dseq, c.nowNs)
	}
	if relayNs > 0 {
		c.enter(ref, phaseRelaying)
	} else {
		c.enter(ref, phaseHolding)
	}
	f.viaStore, f.storeNs = c.replicas[p].cfg.KVViaStore, 0 // per attempt: a re-sent request may prefill elsewhere
	if f.viaStore {
		f.storeNs = c.touch(p).HandOffToStore(ps)
	}
	switch {
	case relayNs > 0:
		c.relay(ref, c.nowNs+relayNs) // through the serving layer (relay.go)
	case f.dseq == nil:
		c.handoff(ref) // the decoder may take it, or refuse it, at once
	}
	c.armHold(p, ref)
}

// refusedBeforeAdmission drops flight ref, whose prefill just ended, for
// reason: the decoder chosen after it cannot hold it and refuses it before
// admitting it. Its prefiller frees the KV at once when told (vLLM ≥ 0.21);
// with StrandRejected it is not told, and the KV stays stranded until the
// hold runs out (strand.go).
func (c *cluster) refusedBeforeAdmission(ref int32, reason string) {
	f := c.flights.at(ref)
	if p := c.replicas[f.route.Prefill].cfg; !p.StrandRejected || p.KVViaStore {
		c.endFlight(ref, results.Dropped, reason)
		return
	}
	c.enter(ref, phaseHolding)
	c.strandPrefill(f, c.strandedExpiryNs(f, c.nowNs, false))
	c.endFlight(ref, results.Dropped, reason)
}

// chooseDecoder asks a router that picks the decoder once the prefill is
// done (router.DecodeLater) for the flight's decoder; the decoder's
// bookkeeping starts then. A flight that has its decoder keeps it. It
// reports false when no decoder is in the router's view (they all crashed
// or drain).
func (c *cluster) chooseDecoder(ref int32) bool {
	f := c.flights.at(ref)
	if f.route.Decode != router.DecodeLater {
		return true
	}
	c.refreshViews()
	if len(c.routing.view.Decode) == 0 {
		return false
	}
	d := c.balanceRank(c.cfg.Router.(router.DecodeRouter).RouteDecode(c.routeRequest(&f.req), &c.routing.view))
	f.route.Decode = d
	c.record(f.req.ID).DecodeInstance = int32(d)
	c.bookDecode(ref)
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, Track{Kind: TrackRouter}, "route → "+c.cfg.Instances[d].Name, c.nowNs)
	}
	if c.fleet != nil {
		c.noteRouted(d, f.req.PromptTokens)
	}
	return true
}

// handoff sends flight ref, whose prefill finished (or, streaming, is
// finishing), to its decode instance, which reserves blocks for the prompt
// before pulling the KV.
func (c *cluster) handoff(ref int32) {
	f := c.flights.at(ref)
	d := &c.replicas[f.route.Decode]
	c.touch(f.route.Decode)
	s := d.eng.NewSeq()
	c.fillSeq(s, ref, &f.req)
	s.Remote = true
	if d.cfg.Engine.Preemption == engine.Reject {
		s.CacheHitThreshold = d.cfg.CacheHitThreshold
	}
	f.dseq = s
	d.outstanding++
	c.loadChanged(f.route.Decode)
	d.eng.Enqueue(s, c.nowNs)
	c.kickSoon(f.route.Decode)
}

// releasePrefill frees the KV a flight's prefill instance holds, if it
// still does; the caller plans that instance's next step when it is time
// to.
func (c *cluster) releasePrefill(f *flight) {
	if f.pseq == nil {
		return // freed already, its KV in the store
	}
	p := &c.replicas[f.route.Prefill]
	c.touch(f.route.Prefill).Release(f.pseq)
	c.recycle(f.route.Prefill, f.pseq, c.record(f.req.ID))
	f.pseq = nil
	p.outstanding--
	c.loadChanged(f.route.Prefill)
}

func prefixTokens(segs []kv.Segment) int {
	n := 0
	for _, s := range segs {
		n += s.Tokens
	}
	return n
}

// recordGaps adds inter-token gaps to the ITL histogram. Most sequences in a
// step waited exactly the step's duration, so equal neighbours are added as
// one run.
func (c *cluster) recordGaps(gaps []int64) {
	for i := 0; i < len(gaps); {
		j := i + 1
		for j < len(gaps) && gaps[j] == gaps[i] {
			j++
		}
		c.itl.AddN(gaps[i], int64(j-i))
		i = j
	}
}
