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

// crashFlight fails flight ref over from crashed instance i. Its
// sequences there are dropped first, which brings a cruising one's
// accounting up to date, so that the phase it leaves is charged right.
func (c *cluster) crashFlight(ref int32, i int) {
	f := c.flights.at(ref)
	if pullsFrom(f, i) {
		c.loseSource(ref, i) // its decoder finds out when it reads (loadfail.go)
		return
	}
	eng := c.touch(i)
	var gone []*engine.Seq
	if s := f.dseq; s != nil && decodingInstance(f) == i {
		eng.Drop(s)
		gone = append(gone, s)
	}
	if s := f.pseq; s != nil && s != f.dseq && f.route.Prefill == i {
		eng.Drop(s)
		gone = append(gone, s)
	}
	if f.phase != phaseFailover {
		c.beginFailover(ref, i)
		c.strandOnDecoderLoss(f, i)
	}
	for _, s := range gone {
		f.carry += int32(c.retire(i, s))
		if f.dseq == s {
			f.dseq = nil
		}
		if f.pseq == s {
			f.pseq = nil
		}
	}
	if f.route.Decode == i && f.dseq == nil {
		f.readsPending, f.pullDone = false, false // its decoder's tier reads are gone with it
	}
	if !c.restart(ref) {
		c.pendFailover(ref)
	}
}

// failOver sends flight ref, whose prefill just finished on instance p
// with no decoder left in the router's view, to the router again.
func (c *cluster) failOver(ref int32, p int) {
	c.beginFailover(ref, p)
	if f := c.flights.at(ref); !c.replicas[p].cfg.KVViaStore { // nobody tells its prefiller to free the KV (strand.go)
		c.strandPrefill(f, c.strandedExpiryNs(f, c.nowNs, false))
	}
	if !c.restart(ref) {
		c.pendFailover(ref)
	}
}

// pendFailover queues failed-over flight ref, which cannot go yet, to be
// retried at every step's end; the first to wait ends every instance's
// run (steprun.go), so that each step's end is an event to retry at.
func (c *cluster) pendFailover(ref int32) {
	if len(c.fleet.pending) == 0 {
		c.endAllRuns()
	}
	c.fleet.pending = append(c.fleet.pending, deadline{ref: ref, id: c.flights.at(ref).req.ID})
}

// beginFailover moves flight ref, hit on instance i, to phaseFailover: its
// attempt's time is charged, its router bookkeeping returned.
func (c *cluster) beginFailover(ref int32, i int) {
	f := c.flights.at(ref)
	rec := c.record(f.req.ID)
	from := f.phase
	before := rec.Time
	c.enter(ref, phaseFailover)
	c.chargeLost(rec, &before)
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

// chargeLost makes the charge of the phase a failed-over flight just
// left add up to the time since its arrival, as every phase's does: the
// attempt's accounting cannot see the part of a step lost with the
// instance (charged as compute), and may have counted a preempted
// sequence's wait to the end (the excess is taken back from what the
// charge added, largest first). before is the record's time before it.
func (c *cluster) chargeLost(rec *results.Record, before *[results.NumTimes]int64) {
	gap := c.nowNs - rec.ArrivalNs
	for _, ns := range rec.Time {
		gap -= ns
	}
	switch {
	case gap > 0 && rec.FirstTokenNs == 0:
		rec.Time[results.TPrefillCompute] += gap
	case gap > 0:
		rec.Time[results.TDecodeCompute] += gap
	}
	for gap < 0 {
		k := 0
		for j := range rec.Time {
			if rec.Time[j]-before[j] > rec.Time[k]-before[k] {
				k = j
			}
		}
		take := min(-gap, rec.Time[k]-before[k])
		if take <= 0 {
			return
		}
		rec.Time[k] -= take
		gap += take
	}
}

// retire forgets sequence s, just taken off instance i (Drop or Abort),
// and returns the tokens it generated there that the client saw.
func (c *cluster) retire(i int, s *engine.Seq) int {
	f := c.flights.at(s.Ref)
	rec := c.record(f.req.ID)
	rec.Preemptions += int32(s.Preemptions)
	if j := f.onboardJob; j > 0 && c.tiers.jobs[j-1].inst == int32(i) {
		c.cancelOnboard(f)
	}
	generated := 0
	if s.Remote || f.local() {
		generated = s.Generated // a prefiller's one token never reaches the client
	}
	c.recycle(i, s, rec)
	c.replicas[i].outstanding--
	c.loadChanged(i)
	return generated
}

// takeOff aborts sequence s on live instance i and retires it.
func (c *cluster) takeOff(i int, s *engine.Seq) int {
	c.touch(i).Abort(s)
	n := c.retire(i, s)
	c.kickSoon(i)
	return n
}

// restart sends failed-over flight ref to the router again, if it can go:
// no transfer of its KV on the wire, and none of its sequences inside a
// step. It reports whether it went (or ended, failed over too often). The
// instances it leaves plan after it is gone (kicks deferred): planning now
// could meet other failed-over flights still on them.
func (c *cluster) restart(ref int32) bool {
	kicking := c.kicking
	c.kicking = true
	ok := c.restartNow(ref)
	c.kicking = kicking
	return ok
}

func (c *cluster) restartNow(ref int32) bool {
	f := c.flights.at(ref)
	if f.waitNet || f.waitStage || f.readsPending {
		return false
	}
	if f.pseq != nil && c.engine(f.route.Prefill).Busy() ||
		f.dseq != nil && c.engine(decodingInstance(f)).Busy() {
		return false
	}
	if s := f.dseq; s != nil {
		f.carry += int32(c.takeOff(decodingInstance(f), s))
		if f.pseq == s {
			f.pseq = nil
		}
		f.dseq = nil
	}
	if s := f.pseq; s != nil {
		c.takeOff(f.route.Prefill, s)
		f.pseq = nil
	}
	generated := int(f.carry)
	f.carry = 0
	if f.failovers >= maxFailovers {
		c.enter(ref, phaseDone)
		delete(c.fleet.failedAt, f.req.ID)
		c.closeRecord(f.req.ID, results.Failed, fmt.Sprintf("failed: its instances crashed %d times", f.failovers),
			output{tokens: f.delivered + generated})
		c.free(ref)
		return true
	}
	f.readsPending, f.pullDone = false, false // per attempt
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
		f := c.flights.at(e.ref)
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
