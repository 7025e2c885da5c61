package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/models/router"
	"handoff/results"
)

// maxAttempts bounds how often decoders may refuse one request before it
// ends as rejected: a limit on everything.
const maxAttempts = 8

// phase is where a request is in its journey through the cluster. A flight
// is in exactly one phase at a time and changes phase only through enter,
// which checks that the move is one the journey allows, charges the time
// spent in the phase it leaves to that phase's attribution component and
// traces it — as raft enters each of its states through one function.
type phase uint8

// The phases, in the order a request usually passes through them. A
// request prefilled on the instance that decodes it (colocated, or locally
// on a decoder) goes from prefilling straight to decoding at its first
// token; a refused one goes back to routing.
const (
	phaseDone         phase = iota // ended (completed, rejected for good, dropped): the slot is free
	phaseFrontend                  // arrived: in the serving front end (HTTP, tokenization), on its way to the router
	phaseRouting                   // arrived, or sent again after a refusal: waiting for the router to place it
	phaseHeld                      // the router declined to place it until routed work finishes
	phasePrefilling                // queued or computing on the instance that runs its prompt
	phaseStreaming                 // prefilling, and its KV already streams to the decoder (layer-wise)
	phaseStreamed                  // prefilling, and the streamed transfer has finished
	phaseRelaying                  // prefill done: its response and the decode request on their way to the decoder's engine (relay.go); the prefiller holds its KV
	phaseHolding                   // prefill done: the prefiller holds its KV until the decoder has room and pulls it
	phaseLost                      // the prefiller no longer has its KV (its hold timed out, or it crashed), the decoder not told: its pull reads freed blocks, fails, or reads the store
	phaseTransferring              // its KV is on the wire
	phaseStaging                   // its KV is re-laid-out for a wafer decoder
	phaseStarting                  // on its decoder before this attempt's first token
	phaseDecoding                  // generating, after this attempt's first token
	phaseRejected                  // refused by its decoder, on its way back to the router (an instant)
	phaseFailover                  // an instance it had state on crashed: waiting to be sent again (failover.go)
	numPhases
)

var phaseNames = [numPhases]string{"done", "frontend", "routing", "held", "prefilling", "streaming", "streamed",
	"relaying", "holding", "lost", "transferring", "staging", "starting", "decoding", "rejected", "failover"}

// String names the phase in error messages.
func (p phase) String() string { return phaseNames[p] }

// prefill reports whether the phase is part of the prefill: its time is
// charged, from the prefill sequence's accounting, when the prefill ends.
func (p phase) prefill() bool { return p >= phasePrefilling && p <= phaseStreamed }

// holdsKV reports whether a flight in the phase has KV on its prefiller
// that its decoder has yet to pull: on its way to the decoder, or there
// waiting for room (lockchain.go counts it).
func (p phase) holdsKV() bool { return p == phaseRelaying || p == phaseHolding }

// inTransit reports whether the flight's KV is on its way to the decoder
// (on the wire or being staged): it cannot be taken back.
func (p phase) inTransit() bool {
	return p == phaseStreaming || p == phaseStreamed || p == phaseTransferring || p == phaseStaging
}

// next is the set of phases a flight may enter from p, as bits. Any phase
// but a transit may also end in failure (see cluster.fail).
func (p phase) next() uint32 {
	if p != phaseDone && !p.inTransit() {
		return p.successors() | 1<<phaseDone
	}
	return p.successors()
}

// successors is the set of phases a flight's journey goes on to from p:
// also, from any phase with state on an instance, a fail-over.
func (p phase) successors() uint32 {
	if p >= phasePrefilling && p <= phaseDecoding {
		return 1<<phaseFailover | p.journey()
	}
	return p.journey()
}

// journey is the set of phases a flight's journey goes on to from p when
// no instance of it crashes.
func (p phase) journey() uint32 {
	const (
		done, routing, held    = 1 << phaseDone, 1 << phaseRouting, 1 << phaseHeld
		frontend               = 1 << phaseFrontend
		prefilling, streaming  = 1 << phasePrefilling, 1 << phaseStreaming
		streamed, holding      = 1 << phaseStreamed, 1 << phaseHolding
		relaying               = 1 << phaseRelaying
		lost, transferring     = 1 << phaseLost, 1 << phaseTransferring
		staging, starting      = 1 << phaseStaging, 1 << phaseStarting
		decoding, rejected     = 1 << phaseDecoding, 1 << phaseRejected
		afterTransfer          = staging | starting
		fromPrefill            = relaying | holding | afterTransfer | transferring | decoding | rejected
		toDecoder, fromDecoder = decoding | rejected, done | rejected
	)
	switch p {
	case phaseDone:
		return frontend | routing // a new request
	case phaseFrontend:
		return routing
	case phaseRouting, phaseHeld:
		return held | prefilling | done
	case phasePrefilling:
		return streaming | fromPrefill
	case phaseStreaming:
		return streamed | transferring
	case phaseStreamed:
		return afterTransfer
	case phaseRelaying:
		return holding | lost // lost: its prefiller freed or lost the KV on the way
	case phaseHolding:
		return lost | transferring | rejected
	case phaseLost:
		return starting | transferring | rejected // transferring: from the store
	case phaseTransferring:
		return afterTransfer
	case phaseStaging:
		return starting
	case phaseStarting:
		return toDecoder
	case phaseDecoding:
		return fromDecoder
	case phaseRejected, phaseFailover:
		return routing | done
	}
	return 0
}

// flight is a request in the cluster, from arrival to its end. req is the
// current attempt: after a phase-2 rejection its prompt has grown by the
// tokens already delivered and its output shrunk by as many.
type flight struct {
	req     Request
	route   router.Decision
	phase   phase
	sinceNs int64       // when it entered its phase
	pseq    *engine.Seq // on the instance that runs its prompt, while it holds anything there
	dseq    *engine.Seq // on the instance that decodes it (pseq itself when prefilled locally)

	attempt   int         // 0 for the first; +1 per refusal
	delivered int         // output tokens the client has seen
	firstAcct engine.Acct // decoder accounting at this attempt's first token

	// When the attempt's phases began, for its trace: its arrival at its
	// prefill instance, the end of its prefill, the start of its KV
	// transfer, and the start of its decode.
	enqueuedNs, handoffNs, pullNs, decodeNs int64
	deadlineNs                              int64 // when a holding prefiller frees the KV
	relayAtNs                               int64 // when its decode leg reaches its decoder's engine (relay.go)

	bookedTokens int // router bookkeeping held for this flight (see book.go)
	bookedBlocks int
	routedHere   bool  // counted in its decoder's routed (book.go)
	viaPrefill   int32 // 1 + the remote prefiller whose through counts it (book.go); 0 none
	// Its estimated tokens in its prefiller's and its decoder's token load
	// (book.go); 0 once released.
	prefillLoad, decodeLoad int

	// Fail-overs (failover.go), packed into what would be padding: whether
	// its router bookkeeping was returned at a crash, whether it still
	// waits for its KV's transfer or staging to end, the tokens the client
	// saw from the lost attempt, and (below) how many fail-overs.
	unbooked, waitNet, waitStage bool
	carry                        int32

	onboardJob   int32 // 1 + the index of its sequence's local onboard (tiers.go); 0 none
	readsPending bool  // its decoder's reads from its tiers are in flight beside its pull
	pullDone     bool  // its pull finished while they were
	viaStore     bool  // its prefiller hands its KV off through the store, where it lands at storeNs
	failovers    uint8
	srcGone      bool // its prefiller crashed after its prefill: the decoder's pull fails (loadfail.go)
	storeNs      int64

	// A decode-first try (decodefirst.go): 1 + the prefiller to send it
	// to if its decoder refuses it (0: not trying), and the tokens the
	// router expects that prefiller to find cached.
	bounceTo, bounceCached int32

	// Traced flights: when the preemption being recovered from happened
	// (−1: none), and the swap-outs seen, to name the recovery.
	preemptedNs int64
	swapOuts    int
}

// on reports whether one of the flight's sequences is on instance i.
func (f *flight) on(i int) bool {
	return f.pseq != nil && f.route.Prefill == i || f.dseq != nil && f.route.Decode == i
}

// local reports whether the attempt is prefilled on the instance that
// decodes it.
func (f *flight) local() bool { return f.route.Decode == -1 }

// roundTrip reports whether the flight is in a rejection round trip: a
// decoder refused an earlier attempt, and this one has not yet produced
// its first token.
func (f *flight) roundTrip() bool {
	return (f.attempt > 0 || f.failovers > 0) && f.phase < phaseDecoding
}

// enter moves flight ref to phase to at the current time. The time spent
// in the phase it leaves goes to that phase's attribution component, and
// the phase's span to the tracer. An illegal move is a simulator bug.
func (c *cluster) enter(ref int32, to phase) {
	f := c.flights.at(ref)
	from := f.phase
	if from.next()&(1<<to) == 0 {
		panic(fmt.Sprintf("sim: request %d cannot go from %v to %v (simulator bug)", f.req.ID, from, to))
	}
	if from != phaseDone {
		c.charge(f, from, to)
		if c.traced(f.req.ID) {
			c.traceLeave(f, from, to)
		}
	}
	if from.holdsKV() != to.holdsKV() {
		c.noteHold(f, to.holdsKV()) // before the phase changes: its prefiller's held KV by decoder
	}
	f.phase, f.sinceNs = to, c.nowNs
	if from.prefill() && !to.prefill() {
		f.handoffNs = c.nowNs
	}
	switch to {
	case phasePrefilling:
		f.enqueuedNs = c.nowNs
	case phaseStreaming:
		f.pullNs = c.nowNs
	case phaseTransferring:
		if from == phaseHolding || from == phaseLost { // else it has streamed since the last prefill step began
			f.pullNs = c.nowNs
		}
	case phaseStarting:
		f.decodeNs = c.nowNs
	case phaseDecoding:
		if from.prefill() {
			f.decodeNs = c.nowNs // prefilled here: the first token starts the decode
		}
	}
}

// charge adds the time flight f spent in phase from, which it leaves for
// to, to its record. In a rejection round trip every phase is charged to
// the round trip; otherwise router queueing, the prefill (split by its
// sequence's accounting), the wait for the decoder and the first token
// (decode_queue_first), the transfer and staging, and the decode (split by
// the decoder's accounting) each go to their own component.
func (c *cluster) charge(f *flight, from, to phase) {
	rec := c.record(f.req.ID)
	spent := c.nowNs - f.sinceNs
	if f.roundTrip() {
		rec.Time[roundTripComponent(rec)] += spent
		if from.prefill() && !to.prefill() && f.pseq != nil {
			f.pseq.OnboardNs = 0 // inside the round trip's time: not charged again as a decoder's
		}
		return
	}
	switch from {
	case phaseFrontend, phaseRelaying:
		rec.Time[results.TFrontend] += spent
	case phaseRouting, phaseHeld:
		rec.Time[results.TRouter] += spent
	case phasePrefilling, phaseStreaming, phaseStreamed:
		if to == phaseRejected && f.bounceTo != 0 { // a decode-first try, queued on its decoder until it refused
			rec.Time[results.TDecodeFirst] += spent
		} else if !to.prefill() {
			c.chargePrefill(rec, f.pseq)
		}
	case phaseHolding, phaseLost, phaseStarting:
		rec.Time[results.TDecodeFirst] += spent
	case phaseTransferring, phaseStaging:
		rec.Time[results.TTransfer] += spent
	case phaseFailover:
		rec.Time[roundTripComponent(rec)] += spent
	case phaseDecoding:
		c.addDecodeTime(rec, f, f.dseq)
		if to == phaseRejected || to == phaseDone { // refused or aborted: its wait since its last step
			rec.Time[idleComponent(f.dseq)] += c.nowNs - f.dseq.MarkNs()
		}
	}
}

// idleComponent is where the wait of decoding sequence s since its last
// step goes: the recovery from its preemption, or the decoder's queue.
func idleComponent(s *engine.Seq) int {
	if s.Recovering() {
		return results.TReprefill
	}
	return results.TDecodeQueue
}

// roundTripComponent is where a rejection round trip's time goes: before
// the client's first token it is still TTFT.
func roundTripComponent(rec *results.Record) int {
	if rec.FirstTokenNs == 0 {
		return results.TDecodeFirst
	}
	return results.TRejection
}

// chargePrefill charges a finished (or abandoned) prefill by its
// sequence's accounting: queueing (re-prefill and swap included) and
// compute, and as queueing any wait since its last step.
func (c *cluster) chargePrefill(rec *results.Record, s *engine.Seq) {
	rec.Time[results.TPrefillQueue] += s.Acct[engine.AcctQueue] + s.Acct[engine.AcctReprefill] +
		s.Acct[engine.AcctSwap] + c.nowNs - s.MarkNs()
	rec.Time[results.TPrefillCompute] += s.Acct[engine.AcctCompute]
	rec.Time[results.TOnboard] += s.OnboardNs
	s.OnboardNs = 0
}

// addDecodeTime charges the decoder time of s since this attempt's first
// token.
func (c *cluster) addDecodeTime(rec *results.Record, f *flight, s *engine.Seq) {
	d := s.Acct.Sub(f.firstAcct)
	rec.Time[results.TDecodeCompute] += d[engine.AcctCompute]
	rec.Time[results.TDecodeQueue] += d[engine.AcctQueue]
	rec.Time[results.TReprefill] += d[engine.AcctReprefill]
	rec.Time[results.TSwap] += d[engine.AcctSwap]
	rec.Time[results.TReprefill] += s.OnboardNs // recovering from a preemption
	s.OnboardNs = 0
}

// newFlight starts a flight for request r in phase first: the front end,
// or routing.
func (c *cluster) newFlight(r *Request, first phase) int32 {
	var ref int32
	if n := len(c.freeFlights); n > 0 {
		ref = c.freeFlights[n-1]
		c.freeFlights = c.freeFlights[:n-1]
	} else {
		ref = c.flights.grow()
	}
	*c.flights.at(ref) = flight{req: *r, preemptedNs: -1}
	c.enter(ref, first)
	return ref
}

// free returns the slot of a flight that has entered phase done.
func (c *cluster) free(ref int32) {
	if c.flights.at(ref).phase != phaseDone {
		panic(fmt.Sprintf("sim: freeing request %d in phase %v (simulator bug)", c.flights.at(ref).req.ID, c.flights.at(ref).phase))
	}
	*c.flights.at(ref) = flight{}
	c.freeFlights = append(c.freeFlights, ref)
}

// closeRecord ends request id's record with a status now, having
// produced out: every request ends exactly once, here or in closeRecordAt.
func (c *cluster) closeRecord(id int64, status results.Status, reason string, out output) *results.Record {
	return c.closeRecordAt(id, status, reason, c.nowNs, out)
}

// closeRecordAt ends request id's record with a status at atNs, when its
// client sees the end — unless the client gave up before: then it ends
// abandoned at that deadline (see clientVerdict), without the first token
// if that came later still. Its output tokens are those of out the client
// saw, and its time components are settled to its end (settleTime).
func (c *cluster) closeRecordAt(id int64, status results.Status, reason string, atNs int64, out output) *results.Record {
	rec := c.record(id)
	if status != results.Abandoned && rec.FirstTokenNs > atNs {
		// The server ended it (a failure, a drop or a refusal after a
		// fail-over or a rejection) while its first token was on its way:
		// the end goes the same way, behind it.
		atNs = rec.FirstTokenNs
	}
	if c.cfg.Client.timeouts() && status != results.Abandoned {
		if gone, why, at := c.clientVerdict(rec, atNs); gone {
			status, reason, atNs = results.Abandoned, why, at
		}
	}
	if status == results.Abandoned && rec.FirstTokenNs > atNs {
		rec.FirstTokenNs = 0 // it gave up before the first token reached it
	}
	rec.Status, rec.Reason, rec.FinishNs = status, reason, atNs
	rec.OutputTokens = int32(out.seen(rec))
	if status != results.Completed {
		settleTime(rec)
	}
	c.ended++
	c.recs.end(id)
	if c.cfg.Client.Concurrency > 0 {
		c.userNext(atNs)
	}
	if rec.Turn > 0 {
		c.nextTurn(rec.Session, atNs)
	}
	return rec
}
