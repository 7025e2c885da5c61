package sim

import (
	"fmt"
	"math"

	"handoff/models/engine"
	"handoff/results"
)

// Failing over. When an instance crashes, every request with state on it —
// queued or prefilling there, holding its KV there for a pull, its KV on
// the wire to or from it, being staged or decoding there, or only routed
// to decode there — fails over: it leaves its journey for phaseFailover,
// whatever it held on the crashed instance is gone, and as soon as it can
// be taken off its other instance (not inside that instance's step) and
// no transfer of its KV is still on the wire, the router is sent it again
// as a new attempt with no KV anywhere. As Dynamo's request migration does
// (lib/llm/src/migration.rs: the stream to the lost worker ends, and the
// request is sent again with the tokens already streamed appended to its
// prompt and taken off its max_tokens), the tokens the client has seen
// stay seen: the new attempt's prompt is the old one plus them, its output
// the rest. The request keeps its identity and record, and ends once.
//
// Record.Failovers counts its fail-overs and Record.FailoverNs the stall
// the client sees: from each crash to the new attempt's first token. A
// request failed over maxFailovers times ends as failed: it is lost.
// Until its new attempt's first token, a failed-over request's time is
// charged as a rejection round trip's (TDecodeFirst before the client's
// first token, TRejection after); the step lost with the instance is
// charged as compute.

// maxFailovers bounds the fail-overs of one request.
const maxFailovers = 8

// hit reports whether flight f has state on instance i that a crash of i
// loses.
func (c *cluster) hit(f *flight, i int) bool {
	switch f.phase {
	case phaseDone, phaseFrontend, phaseRouting, phaseHeld, phaseRejected:
		return false
	}
	return f.on(i) || f.route.Decode == i
}

// crashFlight fails flight ref over from crashed instance i.
func (c *cluster) crashFlight(ref int32, i int) {
	f := &c.flights[ref]
	if f.phase != phaseFailover {
		c.beginFailover(ref, i)
	}
	if f.dseq != nil && decodingInstance(f) == i {
		f.carry += int32(c.takeOff(i, f.dseq, true))
		if f.pseq == f.dseq {
			f.pseq = nil
		}
		f.dseq = nil
	}
	if f.pseq != nil && f.route.Prefill == i {
		c.takeOff(i, f.pseq, true)
		f.pseq = nil
	}
	if f.route.Decode == i && f.dseq == nil {
		f.readsPending, f.pullDone = false, false // its decoder's tier reads are gone with it
	}
	if !c.restart(ref) {
		c.fleet.pending = append(c.fleet.pending, deadline{ref: ref, id: f.req.ID})
	}
}

// failOver sends flight ref, whose prefill just finished on instance p
// with no decoder left in the router's view, to the router again.
func (c *cluster) failOver(ref int32, p int) {
	c.beginFailover(ref, p)
	if !c.restart(ref) {
		c.fleet.pending = append(c.fleet.pending, deadline{ref: ref, id: c.flights[ref].req.ID})
	}
}

// beginFailover moves flight ref, hit on instance i, to phaseFailover: its
// attempt's time is charged, its router bookkeeping returned.
func (c *cluster) beginFailover(ref int32, i int) {
	f := &c.flights[ref]
	rec := &c.records[f.req.ID]
	from := f.phase
	c.enter(ref, phaseFailover)
	c.chargeLost(rec)
	f.waitNet = (from == phaseStreaming || from == phaseTransferring) && !f.pullDone
	f.waitStage = from == phaseStaging
	f.failovers++
	c.fleet.failedAt[f.req.ID] = c.nowNs
	rec.Failovers++
	c.fleet.failovers[i]++
	c.unbook(f)
	f.unbooked = true
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), "fail over", c.nowNs)
	}
}

// chargeLost charges what the attempt's accounting could not see — the
// part of a step lost with the instance — as compute, so that the record's
// components still add up to the time since its arrival.
func (c *cluster) chargeLost(rec *results.Record) {
	gap := c.nowNs - rec.ArrivalNs
	for _, ns := range rec.Time {
		gap -= ns
	}
	if gap <= 0 {
		return
	}
	if rec.FirstTokenNs == 0 {
		rec.Time[results.TPrefillCompute] += gap
	} else {
		rec.Time[results.TDecodeCompute] += gap
	}
}

// takeOff removes sequence s from instance i — dropped from a crashed one,
// aborted from a live one — and returns the tokens it generated there.
func (c *cluster) takeOff(i int, s *engine.Seq, crashed bool) int {
	rp := &c.replicas[i]
	f := &c.flights[s.Ref]
	rec := &c.records[f.req.ID]
	rec.Preemptions += int32(s.Preemptions)
	if s.Onboarding() {
		c.cancelOnboard(f)
	}
	if crashed {
		rp.eng.Drop(s)
	} else {
		rp.eng.Abort(s)
	}
	generated := 0
	if s.Remote || f.local() {
		generated = s.Generated // a prefiller's one token never reaches the client
	}
	c.recycle(i, s, rec)
	rp.outstanding--
	if !crashed {
		c.kickSoon(i)
	}
	return generated
}

// restart sends failed-over flight ref to the router again, if it can go:
// no transfer of its KV on the wire, and none of its sequences inside a
// step. It reports whether it went (or ended, failed over too often).
func (c *cluster) restart(ref int32) bool {
	f := &c.flights[ref]
	if f.waitNet || f.waitStage || f.readsPending {
		return false
	}
	if f.pseq != nil && c.replicas[f.route.Prefill].eng.Busy() ||
		f.dseq != nil && c.replicas[decodingInstance(f)].eng.Busy() {
		return false
	}
	if s := f.dseq; s != nil {
		f.carry += int32(c.takeOff(decodingInstance(f), s, false))
		if f.pseq == s {
			f.pseq = nil
		}
		f.dseq = nil
	}
	if s := f.pseq; s != nil {
		c.takeOff(f.route.Prefill, s, false)
		f.pseq = nil
	}
	generated := int(f.carry)
	f.carry = 0
	if f.failovers >= maxFailovers {
		c.enter(ref, phaseDone)
		delete(c.fleet.failedAt, f.req.ID)
		rec := c.closeRecord(f.req.ID, results.Failed, fmt.Sprintf("failed: its instances crashed %d times", f.failovers))
		rec.OutputTokens = int32(f.delivered + generated)
		c.free(ref)
		return true
	}
	f.delivered += generated
	f.req.PromptTokens += generated
	f.req.OutputTokens -= generated
	c.enqueueRouting(ref)
	return true
}

// retryFailovers restarts the failed-over flights that can go now.
func (c *cluster) retryFailovers() {
	fl := c.fleet
	kept := fl.pending[:0]
	for _, e := range fl.pending {
		f := &c.flights[e.ref]
		if f.phase != phaseFailover || f.req.ID != e.id || c.restart(e.ref) {
			continue
		}
		kept = append(kept, e)
	}
	fl.pending = kept
}

// failoverWaiting reports whether a failed-over flight still waits for
// its KV's transfer or staging: it cannot be aborted yet.
func (f *flight) failoverWaiting() bool {
	return f.phase == phaseFailover && (f.waitNet || f.waitStage || f.readsPending)
}

// noteRecovered adds to a failed-over request's record its stall: from
// the crash to its new attempt's first token, now.
func (c *cluster) noteRecovered(rec *results.Record) {
	at, ok := c.fleet.failedAt[rec.ID]
	if !ok {
		return
	}
	delete(c.fleet.failedAt, rec.ID)
	rec.FailoverUs = int32(min(int64(rec.FailoverUs)+(c.nowNs-at+999)/1000, math.MaxInt32))
}
