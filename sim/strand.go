package sim

import (
	"slices"

	"handoff/models/engine"
)

// Stranded KV: a finished prompt's KV its prefiller still holds for a
// decoder that will never read it, because nobody told the prefiller to
// free it (hold.go):
//
//   - its decoder crashed before its read completed: a dead decoder sends
//     neither the read's completion nor heartbeats, so the KV stays until
//     the timeout, or until the lease's last extension runs out (vLLM's
//     lease design, "Decode Instance Crash");
//   - the decoder chosen after the prefill refused it before admitting
//     it, on a prefill instance with StrandRejected: vLLM's decoders said
//     nothing to the prefiller then until PR #41269 (0.21) made them
//     notify it (request_rejected_before_admission), so the KV stayed
//     until the hold timeout — or, under a lease, the first lease, since
//     no decoder ever heartbeated for it;
//   - no decoder was left to take it (all crashed or draining): nobody
//     tells the prefiller either.
//
// A handoff through the store frees the KV when the write lands, decoder
// or not. Stranded KV leaves its request (which goes on, or ends, without
// it) and waits in the prefiller's strandQueue, by expiry, with one timeout
// event queued for the earliest. A crash of the prefiller loses it. It
// does not keep a run going: once every request has ended, what is still
// stranded is freed without moving the clock (freeStranded).

// strand is one sequence's stranded KV and when it is freed.
type strand struct {
	seq  *engine.Seq
	atNs int64
}

// strandQueue is a prefill instance's stranded KV, by expiry (ties in the
// order stranded), and the expiry its queued event is for.
type strandQueue struct {
	q       []strand
	armed   bool
	armedNs int64
}

// strandArg marks a timeout event's argument as a prefill instance's
// stranded KV rather than its hold deadlines (instances number under
// 2^24).
const strandArg = 1 << 30

// strandEvent decodes a timeout event's argument: the instance, and
// whether the event is for its stranded KV.
func strandEvent(arg int) (p int, ok bool) { return arg &^ strandArg, arg&strandArg != 0 }

// strandPrefill moves the KV flight f's prefiller holds for it to the
// prefiller's stranded KV, freed at atNs (never: at the run's end). The
// request no longer counts on the prefiller; its sequence's preemptions
// and waits go to the record now.
func (c *cluster) strandPrefill(f *flight, atNs int64) {
	p, s := f.route.Prefill, f.pseq
	atNs = max(atNs, c.nowNs) // a deadline due this instant, not yet handled
	rec := c.record(f.req.ID)
	rec.Preemptions += int32(s.Preemptions)
	for k, ns := range s.Wait {
		rec.Waits[k] += ns
	}
	s.Wait = engine.Waits{}
	f.pseq = nil
	c.replicas[p].outstanding--
	c.loadChanged(p)
	sq := &c.replicas[p].hold.stranded
	at := len(sq.q) - 1
	for at >= 0 && sq.q[at].atNs > atNs {
		at--
	}
	sq.q = slices.Insert(sq.q, at+1, strand{seq: s, atNs: atNs})
	if atNs != never && (!sq.armed || atNs < sq.armedNs) {
		sq.armed, sq.armedNs = true, atNs
		c.q.push(atNs, classTimeout, int32(p|strandArg))
	}
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(p), "KV stranded", c.nowNs)
	}
}

// strandedExpiryNs is when f's prefiller frees the KV f leaves stranded
// now: its prefill ended at endNs; heartbeated says whether a decoder held
// the request (and heartbeated for it) until now.
func (c *cluster) strandedExpiryNs(f *flight, endNs int64, heartbeated bool) int64 {
	if f.viaStore {
		return f.storeNs // freed when the store has it, as ever
	}
	return c.replicas[f.route.Prefill].cfg.KVHold.expiryNs(endNs, c.nowNs, heartbeated)
}

// runOver reports whether every request has ended and none can come.
func (c *cluster) runOver() bool { return c.arrivals == 0 && c.ended == c.recs.next }

// strandSuperseded reports whether p's stranded-KV event due at atNs is
// moot: an earlier expiry armed another event, or the run is over.
func (c *cluster) strandSuperseded(p int, atNs int64) bool {
	sq := &c.replicas[p].hold.stranded
	return c.runOver() || !sq.armed || sq.armedNs != atNs
}

// onStrandExpiry frees prefill instance p's stranded KV due now and arms
// the next expiry.
func (c *cluster) onStrandExpiry(p int) {
	sq := &c.replicas[p].hold.stranded
	n := 0
	for n < len(sq.q) && sq.q[n].atNs <= c.nowNs {
		c.freeStrand(p, sq.q[n].seq)
		n++
	}
	sq.q = slices.Delete(sq.q, 0, n)
	sq.armed = len(sq.q) > 0 && sq.q[0].atNs != never
	if sq.armed {
		sq.armedNs = sq.q[0].atNs
		c.q.push(sq.armedNs, classTimeout, int32(p|strandArg))
	}
	c.kickSoon(p)
}

// freeStrand frees one stranded sequence's KV on p.
func (c *cluster) freeStrand(p int, s *engine.Seq) {
	c.touch(p).Release(s)
	c.replicas[p].eng.Recycle(s)
}

// dropStranded loses crashed instance i's stranded KV with the rest of
// its memory.
func (c *cluster) dropStranded(i int) {
	sq := &c.replicas[i].hold.stranded
	eng := c.touch(i)
	for _, st := range sq.q {
		eng.Drop(st.seq)
		eng.Recycle(st.seq)
	}
	sq.q, sq.armed = sq.q[:0], false
}

// holdsForPulls reports whether instance i holds KV that will be freed:
// for a decoder's pull, or stranded until an expiry. KV stranded forever
// (a timeout of 0, its decoder gone) never is.
func (c *cluster) holdsForPulls(i int) bool {
	forever := 0
	for _, st := range c.replicas[i].hold.stranded.q {
		if st.atNs == never {
			forever++
		}
	}
	return c.engine(i).Holding() > forever
}

// freeStranded frees the KV still stranded when the run ends: no request
// waits for the prefillers to free it, and the run does not wait either.
func (c *cluster) freeStranded() {
	for p := range c.replicas {
		sq := &c.replicas[p].hold.stranded
		for _, st := range sq.q {
			c.freeStrand(p, st.seq)
		}
		sq.q, sq.armed = sq.q[:0], false
	}
}
