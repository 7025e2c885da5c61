package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/results"
)

// firstToken handles a sequence's first token on instance i: the client's
// first token (TTFT), or, after a rejection, the end of its round trip.
func (c *cluster) firstToken(i int, s *engine.Seq) {
	f := &c.flights[s.Ref]
	rec := &c.records[f.req.ID]
	if !s.Remote {
		c.unbookPrefill(f) // the prefill was local: it just finished
	}
	switch {
	case f.attempt > 0 && rec.FirstTokenNs == 0: // refused before any token: still TTFT
		rec.Time[results.TDecodeFirst] += c.nowNs - f.rejectedNs
	case f.attempt > 0:
		rec.Time[results.TRejection] += c.nowNs - f.rejectedNs
	case s.Remote:
		rec.Time[results.TDecodeFirst] += c.nowNs - f.arrivedNs
	default: // prefilled here (colocated, or locally on a decoder): the prefill step produced the first token
		rec.Time[results.TPrefillQueue] += s.Acct[engine.AcctQueue] + s.Acct[engine.AcctReprefill] + s.Acct[engine.AcctSwap]
		rec.Time[results.TPrefillCompute] += s.Acct[engine.AcctCompute]
	}
	if rec.FirstTokenNs == 0 {
		rec.FirstTokenNs = c.nowNs
	}
	f.firstAcct = s.Acct
	if c.traced(f.req.ID) {
		c.traceFirstToken(i, f, s)
	}
}

// addDecodeTime charges the decoder time of s since its first token.
func (c *cluster) addDecodeTime(rec *results.Record, f *flight, s *engine.Seq) {
	d := s.Acct.Sub(f.firstAcct)
	rec.Time[results.TDecodeCompute] += d[engine.AcctCompute]
	rec.Time[results.TDecodeQueue] += d[engine.AcctQueue]
	rec.Time[results.TReprefill] += d[engine.AcctReprefill]
	rec.Time[results.TSwap] += d[engine.AcctSwap]
}

// complete ends a request whose last token was generated on instance i.
func (c *cluster) complete(i int, s *engine.Seq) {
	ref := s.Ref
	f := &c.flights[ref]
	rec := &c.records[f.req.ID]
	c.addDecodeTime(rec, f, s)
	if c.traced(f.req.ID) {
		start := f.arrivedNs // from the KV's arrival, or the first token if prefilled here
		if !s.Remote {
			start = rec.FirstTokenNs
		}
		c.cfg.Tracer.Span(f.req.ID, instanceTrack(i), "decode", start, c.nowNs)
	}
	rec.Status = results.Completed
	rec.FinishNs = c.nowNs
	rec.OutputTokens = int32(f.delivered + s.Generated)
	rec.Preemptions += int32(s.Preemptions)
	if f.pseq == s { // colocated
		rec.CachedTokens = int32(s.CachedTokens)
	}
	c.outstanding[i]--
	c.unbook(f)
	c.freeFlight(ref)
	c.insts[i].Recycle(s)
	c.ended++
}

// rejected handles a sequence decoder i refused (vLLM RFC #24256): the
// router sends the request again. Phase 1 re-runs the original request (the
// tokens generated so far are wasted); phase 2 sends a new request whose
// prompt is the original plus the tokens already delivered and whose output
// is shortened by as many.
func (c *cluster) rejected(i int, s *engine.Seq) {
	ref := s.Ref
	f := &c.flights[ref]
	rec := &c.records[f.req.ID]
	c.chargeRejected(rec, f, s)
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Span(f.req.ID, instanceTrack(i), "decode", f.arrivedNs, c.nowNs)
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), fmt.Sprintf("rejected (phase %d)", c.cfg.Instances[i].RejectPhase), c.nowNs)
	}
	rec.Preemptions += int32(s.Preemptions)
	rec.Rejections++
	c.outstanding[i]--
	c.unbook(f)
	generated := s.Generated
	c.insts[i].Recycle(s)
	f.dseq = nil
	if ps := f.pseq; ps != nil && ps != s { // refused before pulling: the prefiller still holds the KV
		c.releasePrefill(f.route.Prefill, ps)
	}
	f.pseq = nil // a local prefill refused by its own instance holds nothing more
	f.attempt++
	if f.attempt >= maxAttempts {
		rec.Status, rec.FinishNs = results.Rejected, c.nowNs
		rec.Reason = fmt.Sprintf("rejected: refused by decoders %d times", f.attempt)
		rec.OutputTokens = int32(f.delivered + generated)
		c.freeFlight(ref)
		c.ended++
		return
	}
	if c.cfg.Instances[i].RejectPhase == 2 {
		f.delivered += generated
		f.req.PromptTokens += generated
		f.req.OutputTokens -= generated
	} else {
		rec.WastedTokens += int32(generated)
	}
	c.enqueueRouting(ref)
}

// chargeRejected charges a refused sequence's time on its decoder and
// opens (or continues) the rejection round trip. Before the client's first
// token the time is TTFT (decode_queue_first); after it, the decoder's
// share goes to the decode components and the round trip starts now —
// unless this attempt never produced a token, when the round trip begun at
// the previous refusal simply continues.
func (c *cluster) chargeRejected(rec *results.Record, f *flight, s *engine.Seq) {
	switch {
	case rec.FirstTokenNs == 0 && f.attempt == 0 && f.pseq == s:
		// A local prefill refused by the instance it queued on: it waited
		// for admission there since it was placed.
		rec.Time[results.TPrefillQueue] += c.nowNs - f.enqueuedNs
	case rec.FirstTokenNs == 0:
		since := f.arrivedNs
		switch {
		case f.attempt > 0:
			since = f.rejectedNs
		case !f.pulled: // refused before it pulled anything (no free slot)
			since = f.handoffNs
		}
		rec.Time[results.TDecodeFirst] += c.nowNs - since
	case s.Generated == 0:
		return
	default:
		c.addDecodeTime(rec, f, s)
		rec.Time[results.TReprefill] += c.nowNs - s.MarkNs() // waited since its preemption
	}
	f.rejectedNs = c.nowNs
}

// drop ends a request that cannot be served.
func (c *cluster) drop(id int64, reason string) {
	rec := &c.records[id]
	rec.Status = results.Dropped
	rec.Reason = reason
	rec.FinishNs = c.nowNs
	rec.OutputTokens = 0
	c.ended++
}
