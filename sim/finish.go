package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/results"
)

// firstToken handles a sequence's first token on instance i: the client's
// first token (TTFT), or, after a rejection, the end of its round trip.
func (c *cluster) firstToken(i int, s *engine.Seq) {
	ref := s.Ref
	f := c.flights.at(ref)
	if f.local() {
		c.unbookPrefill(f) // the prefill was local: it just finished
	}
	c.enter(ref, phaseDecoding)
	// Its onboards here so far (after a preemption, or beside its pull)
	// were before this first token: inside the phases just charged, not
	// a recovery to charge again from the decode (addDecodeTime).
	s.OnboardNs = 0
	rec := c.record(f.req.ID)
	if rec.FirstTokenNs == 0 { // the client sees it once it is on its way back
		emit := c.cfg.Instances[i].FirstEmitNs
		rec.FirstTokenNs = c.nowNs + emit
		rec.Time[results.TFrontend] += emit
		rec.Time[results.TEmit] -= emit
		if c.fleet != nil {
			c.noteFirst(rec)
		}
	}
	if f.failovers > 0 {
		c.noteRecovered(rec)
	}
	f.firstAcct = s.Acct
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), "first token", c.nowNs)
	}
}

// complete ends a request whose last token was generated on instance i.
func (c *cluster) complete(i int, s *engine.Seq) {
	ref := s.Ref
	f := c.flights.at(ref)
	c.enter(ref, phaseDone)
	in := &c.cfg.Instances[i]
	rec := c.closeRecordAt(f.req.ID, results.Completed, "", c.nowNs+in.FinalEmitNs,
		output{f.delivered + s.Generated, s.LastTokenNs, in.FirstEmitNs})
	if rec.Status == results.Completed { // else its client gave up before the end reached it
		rec.Time[results.TEmit] += in.FinalEmitNs
	}
	rec.Preemptions += int32(s.Preemptions)
	if f.local() {
		rec.CachedTokens = int32(s.CachedTokens)
	}
	c.replicas[i].outstanding--
	c.loadChanged(i)
	c.unbook(f)
	c.free(ref)
	c.recycle(i, s, rec)
	if c.fleet != nil {
		c.noteFinished(rec)
	}
}

// rejected handles a sequence decoder i refused (vLLM RFC #24256): the
// router sends the request again. Phase 1 re-runs the original request (the
// tokens generated so far are wasted); phase 2 sends a new request whose
// prompt is the original plus the tokens already delivered and whose output
// is shortened by as many.
func (c *cluster) rejected(i int, s *engine.Seq) {
	if c.bounced(s) {
		c.bounce(i, s) // not a refusal: llm-d's sidecar sends it to the prefiller
		return
	}
	ref := s.Ref
	f := c.flights.at(ref)
	held := f.phase == phaseHolding // refused before pulling: the prefiller still holds the KV
	c.enter(ref, phaseRejected)
	rec := c.record(f.req.ID)
	phase2 := c.replicas[i].cfg.RejectPhase == 2
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), fmt.Sprintf("rejected (phase %d)", c.replicas[i].cfg.RejectPhase), c.nowNs)
	}
	rec.Preemptions += int32(s.Preemptions)
	rec.Rejections++
	c.replicas[i].outstanding--
	c.loadChanged(i)
	c.unbook(f)
	generated, lastNs := s.Generated, s.LastTokenNs
	c.recycle(i, s, rec)
	if held {
		c.releasePrefill(f)
		c.kickSoon(f.route.Prefill)
	}
	f.pseq, f.dseq = nil, nil
	if f.attempt++; f.attempt >= maxAttempts {
		c.enter(ref, phaseDone)
		c.closeRecord(f.req.ID, results.Rejected, fmt.Sprintf("rejected: refused by decoders %d times", f.attempt),
			output{f.delivered + generated, lastNs, c.cfg.Instances[i].FirstEmitNs})
		c.free(ref)
		return
	}
	if phase2 {
		f.delivered += generated
		f.req.PromptTokens += generated
		f.req.OutputTokens -= generated
	} else {
		rec.WastedTokens += int32(generated)
	}
	c.enqueueRouting(ref)
}

// fail ends a request wherever it is, as a failure with a reason.
func (c *cluster) fail(ref int32, reason string) { c.endFlight(ref, results.Failed, reason) }

// endFlight ends a request wherever it is, with a status and a reason: its
// sequences are aborted on their instances (their KV freed) and the router
// forgets it.
func (c *cluster) endFlight(ref int32, status results.Status, reason string) {
	c.endFlightAt(ref, status, reason, c.nowNs)
}

// endFlightAt is endFlight for a record that ends at atNs (a client's
// deadline, which may have passed while the flight could not be aborted).
// A flight queued for the front end or the router keeps its slot until
// that queue reaches it (onFrontendDone, place).
func (c *cluster) endFlightAt(ref int32, status results.Status, reason string, atNs int64) {
	f := c.flights.at(ref)
	queued := f.phase == phaseFrontend || f.phase == phaseRouting || f.phase == phaseHeld
	// What is read of its sequences below (the tokens they generated, and
	// in enter their time) must be current, though they may cruise.
	if s := f.dseq; s != nil {
		c.touch(decodingInstance(f)).Settle(s)
	}
	if s := f.pseq; s != nil && s != f.dseq {
		c.touch(f.route.Prefill).Settle(s)
	}
	c.enter(ref, phaseDone)
	out := output{tokens: f.delivered}
	if s := f.dseq; s != nil {
		d := decodingInstance(f)
		out = output{f.delivered + s.Generated, s.LastTokenNs, c.cfg.Instances[d].FirstEmitNs}
		c.abortSeq(d, s)
	}
	if s := f.pseq; s != nil && s != f.dseq {
		c.abortSeq(f.route.Prefill, s)
	}
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(decodingInstance(f)), status.String(), c.nowNs)
	}
	c.closeRecordAt(f.req.ID, status, reason, atNs, out)
	c.unbook(f)
	if !queued {
		c.free(ref)
	}
}

// abortSeq takes a sequence off instance i.
func (c *cluster) abortSeq(i int, s *engine.Seq) {
	rp := &c.replicas[i]
	rec := c.record(c.flights.at(s.Ref).req.ID)
	rec.Preemptions += int32(s.Preemptions)
	if s.Onboarding() {
		c.cancelOnboard(c.flights.at(s.Ref))
	}
	c.touch(i).Abort(s)
	c.recycle(i, s, rec)
	rp.outstanding--
	c.loadChanged(i)
	c.kickSoon(i)
}

// The engine's wait causes are the records', in the same order.
var (
	_ [results.NumWaits - engine.NumWaitCauses]struct{}
	_ [engine.NumWaitCauses - results.NumWaits]struct{}
)

// recycle hands a sequence done on instance i back to its engine, its
// waits added to the request's record first.
func (c *cluster) recycle(i int, s *engine.Seq, rec *results.Record) {
	for k, ns := range s.Wait {
		rec.Waits[k] += ns
	}
	c.replicas[i].eng.Recycle(s)
}

// drop ends a request that cannot be served.
func (c *cluster) drop(id int64, reason string) {
	c.closeRecord(id, results.Dropped, reason, output{})
}
