package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// maxAttempts bounds how often decoders may refuse one request before it
// ends as rejected: a limit on everything.
const maxAttempts = 8

// flight is a request in the cluster, from arrival to its end. req is the
// current attempt: after a phase-2 rejection its prompt has grown by the
// tokens already delivered and its output shrunk by as many.
type flight struct {
	req          Request
	route        router.Decision
	pseq         *engine.Seq // on the prefill (or colocated) instance
	dseq         *engine.Seq // on the decode instance
	attempt      int         // 0 for the first; +1 per rejection
	delivered    int         // output tokens the client has seen
	handoffNs    int64       // prefill finished
	pullNs       int64       // KV transfer started
	arrivedNs    int64       // KV transfer finished
	rejectedNs   int64       // start of the current rejection round trip
	firstAcct    engine.Acct // decoder accounting at this attempt's first token
	recovering   bool        // a preemption victim not yet recovered (cascade tracking)
	pulled       bool        // the decoder started pulling the KV (pullNs is valid)
	netDone      bool        // streaming: the transfer finished before the prefill step
	kvLost       bool        // the prefill instance freed the KV before the decoder pulled it
	deadlineNs   int64       // when a holding prefill instance frees the KV
	enqueuedNs   int64       // when this attempt reached its prefill instance
	bookedTokens int         // router bookkeeping held for this flight (see book.go)
	bookedBlocks int
	free         bool
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
	case prefixTokens(c.next.Prefix) > c.next.PromptTokens || c.next.PromptTokens < 1 || c.next.OutputTokens < 1:
		c.err = fmt.Errorf("sim: request %d has %d prompt tokens (%d in its prefix segments) and %d output tokens",
			len(c.records), c.next.PromptTokens, prefixTokens(c.next.Prefix), c.next.OutputTokens)
	default:
		c.q.push(c.next.ArrivalNs, classArrival, 0)
	}
}

// onArrival routes the pending request, or drops it if no instance can hold
// it, then reads the next one.
func (c *cluster) onArrival() {
	r := c.next
	r.ID = int64(len(c.records))
	c.records = append(c.records, results.Record{ID: r.ID, ArrivalNs: r.ArrivalNs,
		PromptTokens: int32(r.PromptTokens), OutputTokens: int32(r.OutputTokens),
		PrefillInstance: -1, DecodeInstance: -1})
	if reason := c.tooLong(&r); reason != "" {
		c.drop(r.ID, reason)
	} else {
		c.enqueueRouting(c.newFlight(&r))
	}
	c.pullArrival()
}

// place routes the flight's current attempt and enqueues it on its prefill
// instance. It reports false when the router holds the request.
func (c *cluster) place(ref int32) bool {
	f := &c.flights[ref]
	r := &f.req
	c.refreshViews()
	d := c.cfg.Router.Route(c.routeRequest(r), &c.routing.view)
	if d.Held() {
		return false
	}
	if reason := c.doesNotFit(r, d); reason != "" {
		c.drop(r.ID, reason)
		c.freeFlight(ref)
		return true
	}
	f.route = d
	f.pulled, f.netDone, f.kvLost, f.deadlineNs = false, false, false, 0 // a fresh attempt
	c.book(f)
	rec := &c.records[r.ID]
	rec.PrefillInstance, rec.DecodeInstance = int32(d.Prefill), int32(d.Decode)
	if f.attempt == 0 {
		rec.Time[results.TRouter] += c.nowNs - r.ArrivalNs
	}
	f.enqueuedNs = c.nowNs
	if c.traced(r.ID) {
		c.traceRoute(f)
	}
	inst := c.insts[d.Prefill]
	s := inst.NewSeq()
	c.fillSeq(s, ref, r)
	s.Hold = d.Decode >= 0
	if s.Hold {
		s.MaxNew = 1 // a prefill instance samples one token, which the client never sees
	}
	f.pseq = s
	c.outstanding[d.Prefill]++
	inst.Enqueue(s, c.nowNs)
	c.kickSoon(d.Prefill)
	return true
}

func (c *cluster) fillSeq(s *engine.Seq, ref int32, r *Request) {
	s.Ref = ref
	s.Prefix = r.Prefix
	s.UniqueID = uint64(r.ID) + 1
	s.PromptTokens = r.PromptTokens
	s.MaxNew = r.OutputTokens
}

// onStep applies a finished step and starts the next one.
func (c *cluster) onStep(i int) {
	res := c.insts[i].Complete(c.stepStartNs[i], c.nowNs)
	c.busyNs[i] += c.nowNs - c.stepStartNs[i]
	c.recordGaps(res.TokenGapsNs)
	if res.SteadyTokens > 0 {
		c.itl.AddN(res.SteadyGapNs, int64(res.SteadyTokens))
	}
	c.progress(i, len(res.TokenGapsNs)+res.SteadyTokens+len(res.FirstTokens)-len(res.Recovered))
	c.recovered(i, res.Recovered)
	// Handling the results may place a held request on this very instance;
	// planning it now would overwrite the results being handled.
	c.completing = i
	prefillRole := c.cfg.Instances[i].Role == RolePrefill
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
	c.kickSoon(i)
}

// prefillDone handles a prefill that finished on instance p: its time is
// charged, the decoder is handed the request (unless streaming already did)
// and the KV is held until pulled (or its timeout).
func (c *cluster) prefillDone(p int, ps *engine.Seq) {
	ref := ps.Ref
	f := &c.flights[ref]
	f.handoffNs = c.nowNs
	c.unbookPrefill(f)
	if c.traced(f.req.ID) {
		c.tracePrefill(p, f)
	}
	if f.attempt == 0 {
		rec := &c.records[f.req.ID]
		rec.Time[results.TPrefillQueue] += ps.Acct[engine.AcctQueue] + ps.Acct[engine.AcctReprefill] + ps.Acct[engine.AcctSwap]
		rec.Time[results.TPrefillCompute] += ps.Acct[engine.AcctCompute]
	}
	switch {
	case f.netDone: // streamed, and the transfer already finished
		c.transferred(ref)
		c.kickSoon(f.route.Decode)
		return
	case f.dseq == nil:
		attempt := f.attempt
		c.handoff(ps)
		if f.attempt != attempt {
			return // the decoder refused it at once: the request moved on
		}
	}
	if t := c.cfg.Instances[p].KVHoldTimeoutNs; t > 0 && !f.pulled {
		f.deadlineNs = c.nowNs + t
		c.q.push(f.deadlineNs, classTimeout, ref)
	}
}

// onHoldTimeout frees KV a prefill instance held too long for a decoder
// that never pulled it; the decoder will compute the prompt itself.
func (c *cluster) onHoldTimeout(ref int32) {
	f := &c.flights[ref]
	if f.free || f.pseq == nil || f.pulled || f.deadlineNs != c.nowNs {
		return // pulled meanwhile, or the flight moved on
	}
	p := f.route.Prefill
	rec := &c.records[f.req.ID]
	rec.Preemptions += int32(f.pseq.Preemptions)
	if f.attempt == 0 {
		rec.CachedTokens = int32(f.pseq.CachedTokens)
	}
	c.insts[p].Release(f.pseq)
	c.insts[p].Recycle(f.pseq)
	f.pseq = nil
	f.kvLost = true
	c.outstanding[p]--
	c.kickSoon(p)
}

// handoff sends a request whose prefill finished (or, streaming, is
// finishing) to its decode instance, which reserves blocks for the prompt
// before pulling the KV.
func (c *cluster) handoff(ps *engine.Seq) {
	f := &c.flights[ps.Ref]
	d := f.route.Decode
	inst := c.cfg.Instances[d]
	s := c.insts[d].NewSeq()
	c.fillSeq(s, ps.Ref, &f.req)
	s.Remote = true
	if inst.Engine.Preemption == engine.Reject {
		s.CacheHitThreshold = inst.CacheHitThreshold
	}
	f.dseq = s
	c.outstanding[d]++
	c.insts[d].Enqueue(s, c.nowNs)
	c.kickSoon(d)
}

// startPull begins the KV transfer of a decode sequence that got its blocks.
func (c *cluster) startPull(d int, s *engine.Seq) {
	f := &c.flights[s.Ref]
	f.pullNs, f.pulled = c.nowNs, true
	if f.kvLost {
		f.arrivedNs = c.nowNs
		if f.attempt == 0 {
			c.records[f.req.ID].Time[results.TDecodeFirst] += c.nowNs - f.handoffNs
		}
		c.insts[d].KVLost(s, c.nowNs)
		c.kickSoon(d)
		return
	}
	path, latencyNs := c.cfg.Topology.Path(f.route.Prefill, d)
	bytes := float64(s.RemoteTokens) * c.cfg.KVBytesPerToken
	c.net.Start(s.Ref, path, latencyNs, bytes, c.nowNs)
	c.scheduleNetwork()
}

// onNetwork completes the transfers due now: the prefill instance frees the
// request's blocks and the decode instance resumes it.
func (c *cluster) onNetwork() {
	c.netAtNs = -1
	c.doneScratch = c.net.Advance(c.nowNs, c.doneScratch[:0])
	for _, ref := range c.doneScratch {
		if f := &c.flights[ref]; !f.pseq.Finished() {
			f.netDone = true // streamed ahead of its prefill step: wait for it
			continue
		}
		c.transferred(ref)
	}
	// Kick only after applying every transfer due now, so that a decoder
	// batches all the sequences that became ready at this instant.
	for _, ref := range c.doneScratch {
		f := &c.flights[ref]
		c.kickSoon(f.route.Decode)
		c.kickSoon(f.route.Prefill)
	}
	c.scheduleNetwork()
}

// transferred applies one finished KV transfer.
// If the decoder stages KV into its own layout (a wafer), the KV is ready
// only after bytes / staging rate more.
func (c *cluster) transferred(ref int32) {
	f := &c.flights[ref]
	p, d := f.route.Prefill, f.route.Decode
	rec := &c.records[f.req.ID]
	rec.Preemptions += int32(f.pseq.Preemptions)
	if f.attempt == 0 {
		rec.CachedTokens = int32(f.pseq.CachedTokens)
	}
	if c.traced(f.req.ID) {
		c.traceTransfer(f)
	}
	c.insts[p].Release(f.pseq)
	c.insts[p].Recycle(f.pseq)
	f.pseq = nil
	c.outstanding[p]--
	if rate := c.cfg.Instances[d].StagingBps; rate > 0 {
		bytes := float64(f.dseq.RemoteTokens) * c.cfg.KVBytesPerToken
		c.q.push(c.nowNs+int64(bytes/rate*1e9+0.5), classStaging, ref)
		return
	}
	c.kvReady(ref)
}

// kvReady hands the transferred (and staged) KV to the decoder.
func (c *cluster) kvReady(ref int32) {
	f := &c.flights[ref]
	f.arrivedNs = c.nowNs
	rec := &c.records[f.req.ID]
	if f.attempt == 0 {
		// Streaming may start the pull before the prefill ends; only what
		// sticks out past the prefill's end is transfer time on the path.
		start := max(f.pullNs, f.handoffNs)
		rec.Time[results.TTransfer] += f.arrivedNs - start
		rec.Time[results.TDecodeFirst] += start - f.handoffNs
	}
	c.insts[f.route.Decode].KVArrived(f.dseq, c.nowNs)
}

// releasePrefill frees a prefill sequence's held KV on instance p.
func (c *cluster) releasePrefill(p int, ps *engine.Seq) {
	c.insts[p].Release(ps)
	c.insts[p].Recycle(ps)
	c.outstanding[p]--
	c.kickSoon(p)
}

func prefixTokens(segs []kv.Segment) int {
	n := 0
	for _, s := range segs {
		n += s.Tokens
	}
	return n
}

func (c *cluster) newFlight(r *Request) int32 {
	var ref int32
	if n := len(c.freeFlights); n > 0 {
		ref = c.freeFlights[n-1]
		c.freeFlights = c.freeFlights[:n-1]
	} else {
		ref = int32(len(c.flights))
		c.flights = append(c.flights, flight{})
	}
	c.flights[ref] = flight{req: *r}
	return ref
}

func (c *cluster) freeFlight(ref int32) {
	c.flights[ref] = flight{free: true}
	c.freeFlights = append(c.freeFlights, ref)
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
