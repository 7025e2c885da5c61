package sim

import (
	"errors"
	"math"
)

// Holding a finished prompt's KV for its decoder, as vLLM's NIXL connector
// does on the prefill side. The prefiller frees the KV when the decoder's
// read of it completes (the decoder's completion notification), when the
// decoder drops the request and says so (an abort before the read:
// NixlConnectorScheduler.request_finished sends the prefiller an empty
// read), or when its hold runs out — whichever comes first. How the hold
// runs out is per prefill instance (KVHold):
//
//   - a timeout (vLLM up to 0.21, VLLM_NIXL_ABORT_REQUEST_TIMEOUT: 120 s
//     until vLLM PR #25897 made it 480 s): the KV is freed TimeoutNs after
//     the prefill ends, pulled or not. The decoder is not told (vLLM issue
//     #21570): a pull that starts after it, or is still reading then,
//     reads blocks the prefiller may have given to other requests, and
//     nothing detects it — the prefiller only logs a read for a request
//     it does not know (the NIXL worker's "Potentially invalid KV blocks
//     for unrecognized request"), the decoder serves the request from what
//     it read. The core lets such a pull go ahead with its normal timing
//     and counts it (Record.ExpiredKVReads): an answer that may be wrong.
//     The deadlines are the same for every request of the instance, so
//     they come in order (a deadlineQueue, deadlines.go).
//   - a lease (vLLM PR #41383, from 0.22; docs/design/nixl_kv_cache_lease.md
//     and the NIXL connector's base_scheduler.py, worker.py): the prefill's
//     end grants LeaseNs; the decoder, from when the request enters its
//     queue until its read completes, sends heartbeats at most every
//     HeartbeatNs (throttled decoder-wide in build_connector_meta), each
//     holding the KV ExtendNs past it (_handle_heartbeat: max(expiry, now +
//     extension)). So the KV stays as long as the decoder keeps the
//     request, however long it queues there, and no pull ever reads
//     expired KV; a decoder that vanishes (a crash) leaves it held until
//     the last heartbeat's extension or the first lease runs out
//     (stranded, strand.go).
//
// KV that nobody will read but that the prefiller has not been told to
// free — its decoder crashed, refused the request before admitting it with
// StrandRejected, or no decoder was left to take it — is stranded: it
// stays on the prefiller, counted in its pool, until its hold runs out.

// KVHold is how a prefill instance bounds the time it holds a finished
// prompt's KV for its decoder: a fixed timeout, or a lease its decoder
// renews. The zero value holds the KV until it is pulled, forever.
type KVHold struct {
	Lease bool // a lease (vLLM ≥ 0.22); else a timeout

	// TimeoutNs, for a timeout: free the KV this long after the prefill
	// ends, whether or not it was pulled; 0 = never.
	TimeoutNs int64

	// A lease: the prefill's end grants LeaseNs (vLLM's kv_lease_duration,
	// 30 s); the decoder heartbeats at most every HeartbeatNs (duration //
	// 6, in whole seconds: 5 s; 0 = at every step) while it holds the
	// request, each heartbeat holding the KV ExtendNs past it (duration ·
	// 2 // 3: 20 s). HeartbeatNs ≤ ExtendNs < LeaseNs, as vLLM's integer
	// arithmetic gives for any duration of a second or more, so the lease
	// never lapses between heartbeats.
	LeaseNs, HeartbeatNs, ExtendNs int64
}

// never is the expiry of KV held until pulled, or until the run ends.
const never = math.MaxInt64

// validate checks the hold's figures.
func (h *KVHold) validate() error {
	switch {
	case h.TimeoutNs < 0:
		return errors.New("the KV hold timeout must not be negative")
	case !h.Lease && (h.LeaseNs|h.HeartbeatNs|h.ExtendNs) != 0:
		return errors.New("a KV hold timeout has no lease, heartbeat or extension")
	case h.Lease && h.TimeoutNs != 0:
		return errors.New("a KV lease has no timeout")
	case h.Lease && !(h.HeartbeatNs >= 0 && h.HeartbeatNs <= h.ExtendNs && h.ExtendNs < h.LeaseNs):
		return errors.New("a KV lease needs 0 ≤ heartbeat ≤ extension < lease")
	}
	return nil
}

// validateHandoff checks an instance's prefill-side and decode-side
// handoff settings against its role.
func (in *Instance) validateHandoff() error {
	if err := in.KVHold.validate(); err != nil {
		return err
	}
	switch {
	case in.Role != RolePrefill && (in.KVHold != KVHold{} || in.StrandRejected):
		return errors.New("only a prefill instance holds KV for a decoder")
	case in.Role != RoleDecode && (in.RecomputeLoadFailures || in.DecodeFirst || in.DecodeFirstThreshold != 0):
		return errors.New("only a decode instance loads KV or takes a request first")
	case !(in.DecodeFirstThreshold >= 0 && in.DecodeFirstThreshold <= 1):
		return errors.New("the decode-first cache-hit threshold must be in [0, 1]")
	case in.DecodeFirst && len(in.Engine.Layouts) > 0:
		return errors.New("a wafer's slots cannot take a request first: decode-first needs a paged KV pool")
	}
	return nil
}

// expiryNs is when prefill instance p frees KV its prefill finished
// producing at endNs when its decoder dropped the request at dropNs
// without telling it: the timeout, or the lease — the first one, or, when
// the decoder held the request (heartbeated), the extension of its last
// heartbeat, on the decoder's grid of heartbeats.
func (h *KVHold) expiryNs(endNs, dropNs int64, heartbeated bool) int64 {
	switch {
	case !h.Lease && h.TimeoutNs == 0:
		return never
	case !h.Lease:
		return endNs + h.TimeoutNs
	case !heartbeated:
		return endNs + h.LeaseNs
	}
	last := dropNs
	if h.HeartbeatNs > 0 {
		last -= dropNs % h.HeartbeatNs
	}
	return max(endNs+h.LeaseNs, last+h.ExtendNs)
}

// kvHold is an instance's state of KV held across the handoff (prefill
// role): the timeout deadlines of the KV its flights hold, and the KV
// stranded on it (strand.go).
type kvHold struct {
	deadlines deadlineQueue
	stranded  strandQueue
}

// holdUntil records that flight ref's KV on prefill instance p is freed at
// atNs unless pulled before.
func (c *cluster) holdUntil(p int, ref int32, atNs int64) {
	f := c.flights.at(ref)
	f.deadlineNs = atNs
	if c.replicas[p].hold.deadlines.add(deadline{ref: ref, id: f.req.ID, atNs: atNs}) {
		c.q.push(atNs, classTimeout, int32(p))
	}
}

// armHold starts the hold of the KV flight ref's prefill, just ended on
// p, leaves there — waiting for its pull, or read by it: freed when the
// store has it, or at the timeout. A lease sets no deadline: it lasts while
// a decoder holds the request.
func (c *cluster) armHold(p int, ref int32) {
	f := c.flights.at(ref)
	switch h := &c.replicas[p].cfg.KVHold; {
	case f.pseq == nil || !f.phase.holdsKV() && f.phase != phaseTransferring:
	case f.viaStore:
		if f.phase.holdsKV() {
			c.holdUntil(p, ref, f.storeNs)
		}
	case !h.Lease && h.TimeoutNs > 0:
		c.holdUntil(p, ref, c.nowNs+h.TimeoutNs)
	}
}

// holding reports whether entry e's flight still holds its KV on p,
// waiting for that deadline: before its pull, or while the pull reads it
// (a timeout does not wait for the read to end).
func (c *cluster) holding(p int, e deadline) bool {
	f := c.flights.at(e.ref)
	return f.req.ID == e.id && f.deadlineNs == e.atNs && f.route.Prefill == p && f.pseq != nil &&
		(f.phase.holdsKV() || f.phase == phaseTransferring && !f.viaStore)
}

// dropPulled discards the deadlines at the head of p's queue whose KV was
// pulled (or whose flight moved on) and returns the queue.
func (c *cluster) dropPulled(p int) *deadlineQueue {
	h := &c.replicas[p].hold.deadlines
	h.dropMoot(func(e deadline) bool { return c.holding(p, e) })
	return h
}

// holdSuperseded reports whether p's timeout event due at atNs is moot:
// every deadline it stood for was pulled meanwhile (or, for stranded KV,
// see strandSuperseded). The event moves to the next deadline that may
// still apply, if any.
func (c *cluster) holdSuperseded(arg int, atNs int64) bool {
	if p, ok := strandEvent(arg); ok {
		return c.strandSuperseded(p, atNs)
	}
	moot, next, ok := c.dropPulled(arg).superseded(atNs)
	if ok {
		c.q.push(next, classTimeout, int32(arg))
	}
	return moot
}

// onHoldTimeouts frees the KV prefill instance p has held past its
// deadline, and arms the next deadline; arg may instead name p's stranded
// KV (strand.go).
func (c *cluster) onHoldTimeouts(arg int) {
	if p, ok := strandEvent(arg); ok {
		c.onStrandExpiry(p)
		return
	}
	p := arg
	h := c.dropPulled(p)
	for e, ok := h.due(c.nowNs); ok; e, ok = h.due(c.nowNs) {
		c.onHoldTimeout(e.ref)
		h = c.dropPulled(p)
	}
	if at, ok := h.rearm(); ok {
		c.q.push(at, classTimeout, int32(p))
	}
	c.kickSoon(p)
}

// onHoldTimeout frees the KV a prefill instance held too long for flight
// ref's decoder, which is not told. Handed off through the store, the
// decoder reads it from there. Otherwise a pull already reading it reads
// freed blocks, and one that starts later will (startPull): expired-KV
// reads. The caller plans the instance's next step.
func (c *cluster) onHoldTimeout(ref int32) {
	f := c.flights.at(ref)
	rec := c.record(f.req.ID)
	rec.Preemptions += int32(f.pseq.Preemptions)
	if f.attempt == 0 {
		rec.CachedTokens = int32(f.pseq.CachedTokens)
	}
	if f.phase == phaseTransferring {
		if !f.pullDone { // else the read is over: only the decoder's tier reads go on
			c.expiredRead(f)
		}
	} else {
		c.enter(ref, phaseLost)
	}
	c.releasePrefill(f)
}

// expiredRead counts a pull of KV its prefiller freed at its timeout: the
// decoder reads whatever the blocks hold now and serves the request from
// it, undetected.
func (c *cluster) expiredRead(f *flight) {
	rec := c.record(f.req.ID)
	if rec.ExpiredKVReads < math.MaxUint8 {
		rec.ExpiredKVReads++
	}
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(f.route.Decode), "reads expired KV", c.nowNs)
	}
}
