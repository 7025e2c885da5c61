package sim

import (
	"handoff/models/engine"
	"handoff/results"
)

// TrackKind says what a trace track stands for.
type TrackKind uint8

// The track kinds.
const (
	TrackInstance TrackKind = iota // an engine instance (Index into Config.Instances)
	TrackLink                      // a network link (Index into Topology.Names)
	TrackRouter                    // the router (Index 0)
)

// Track is one timeline of a journey trace.
type Track struct {
	Kind  TrackKind
	Index int
}

// Tracer receives the journeys of chosen requests of a run (the first
// Config.TraceRequests, or those Config.TraceSelect picks), for a
// request-journey trace (Chrome trace-event JSON, which Perfetto loads), and
// with a timeline every instance's state at each sample. The core calls it
// synchronously and never reads anything back; a nil Tracer costs one
// branch per phase. IDs are request IDs; times are ns.
type Tracer interface {
	// Span is a phase of request id on a track, from startNs to endNs.
	Span(id int64, t Track, name string, startNs, endNs int64)
	// Instant is a point event (a preemption, a rejection, a first token).
	Instant(id int64, t Track, name string, atNs int64)
	// Flow links the end of one phase to the start of the next across
	// tracks (prefill → transfer → decode).
	Flow(id int64, from Track, fromNs int64, to Track, toNs int64)
	// Counter is the value of one of an instance's counters (KV in use,
	// running, waiting) from atNs on, at each timeline sample.
	Counter(t Track, name string, atNs int64, value float64)
	// InstanceSpan is a spell of an instance's own, no request's (a
	// lock-up), on its track from startNs to endNs.
	InstanceSpan(t Track, name string, startNs, endNs int64)
}

// traced reports whether request id's journey goes to the tracer.
func (c *cluster) traced(id int64) bool {
	if c.cfg.Tracer == nil {
		return false
	}
	if c.cfg.TraceSelect != nil {
		return c.cfg.TraceSelect(id)
	}
	return id < c.cfg.TraceRequests
}

// traceCounters reports every instance's KV use, running and waiting
// sequences at a timeline sample.
func (c *cluster) traceCounters(atNs int64) {
	for i := range c.replicas {
		in, t := c.replicas[i].eng, instanceTrack(i)
		c.cfg.Tracer.Counter(t, "KV in use (%)", atNs, 100*float64(in.Pool().UsedBlocks())/float64(in.Pool().NumBlocks()))
		c.cfg.Tracer.Counter(t, "running", atNs, float64(in.Running()))
		c.cfg.Tracer.Counter(t, "waiting", atNs, float64(in.Waiting()))
	}
}

// traceRecovered records, for the traced sequences that recovered on
// instance i, the span since their preemption: a re-prefill, or the time
// swapped out.
func (c *cluster) traceRecovered(i int, seqs []*engine.Seq) {
	for _, s := range seqs {
		f := c.flights.at(s.Ref)
		if !c.traced(f.req.ID) || f.preemptedNs < 0 {
			continue
		}
		name := "re-prefill"
		if s.SwapOuts > 0 && f.swapOuts != s.SwapOuts {
			name = "swapped out"
		}
		f.swapOuts = s.SwapOuts
		c.cfg.Tracer.Span(f.req.ID, instanceTrack(i), name, f.preemptedNs, c.nowNs)
		f.preemptedNs = -1
	}
}

func instanceTrack(i int) Track { return Track{Kind: TrackInstance, Index: i} }

// traceLeave records the span of the phase flight f leaves for to: the
// router queue and placement, the prefill, the decode leg's way to the
// decoder (relay.go), the KV transfer (with the wait for decoder blocks
// before it), and the decode.
func (c *cluster) traceLeave(f *flight, from, to phase) {
	switch {
	case from == phaseFrontend:
		c.cfg.Tracer.Span(f.req.ID, Track{Kind: TrackRouter}, "frontend", f.req.ArrivalNs, c.nowNs)
	case to == phasePrefilling:
		c.traceRoute(f)
	case from.prefill() && !to.prefill() && to != phaseRejected:
		c.tracePrefill(f)
		if from == phaseStreamed {
			c.traceTransfer(f)
		}
	case from == phaseRelaying: // the prefiller's response and the decode request, through the serving layer
		c.cfg.Tracer.Span(f.req.ID, Track{Kind: TrackRouter}, "to the decoder", f.handoffNs, c.nowNs)
	case from == phaseTransferring:
		c.traceTransfer(f)
	case from == phaseStarting || from == phaseDecoding:
		if to == phaseDone || to == phaseRejected {
			c.cfg.Tracer.Span(f.req.ID, instanceTrack(decodingInstance(f)), "decode", f.decodeNs, c.nowNs)
		}
	}
}

// tracePrefill records a finished prefill on its instance, split, when it
// queued, into its queueing and its compute (re-prefills and swaps have
// their own slices, traceRecovered). The queue slice comes first and holds
// all the sequence's queueing, the waits between its chunks included.
func (c *cluster) tracePrefill(f *flight) {
	t, id, inst := c.cfg.Tracer, f.req.ID, instanceTrack(f.route.Prefill)
	t.Span(id, inst, "prefill", f.enqueuedNs, c.nowNs)
	if f.pseq == nil {
		return
	}
	queued := min(f.pseq.Acct[engine.AcctQueue]+c.nowNs-f.pseq.MarkNs(), c.nowNs-f.enqueuedNs)
	if queued > 0 { // else the prefill is all compute: a child as long as it would not nest
		t.Span(id, inst, "queue", f.enqueuedNs, f.enqueuedNs+queued)
		t.Span(id, inst, "compute", f.enqueuedNs+queued, c.nowNs)
	}
}

// traceRoute records the placement and any router queueing.
func (c *cluster) traceRoute(f *flight) {
	t, id := c.cfg.Tracer, f.req.ID
	router := Track{Kind: TrackRouter}
	if start := f.req.ArrivalNs + c.record(id).Time[results.TFrontend]; f.attempt == 0 && c.nowNs > start {
		t.Span(id, router, "router queue", start, c.nowNs)
	}
	name := "route → " + c.cfg.Instances[f.route.Prefill].Name
	if f.route.Decode >= 0 { // not yet chosen when the router picks it after the prefill
		name += " → " + c.cfg.Instances[f.route.Decode].Name
	}
	t.Span(id, router, name, c.nowNs, c.nowNs) // a slice, not an instant: Perfetto drops flows that start on none
	t.Flow(id, router, c.nowNs, instanceTrack(f.route.Prefill), c.nowNs)
}

// traceTransfer records a finished KV transfer on every link it crossed,
// the wait for decoder blocks before it, and the flows joining them.
func (c *cluster) traceTransfer(f *flight) {
	t, id := c.cfg.Tracer, f.req.ID
	p, d := instanceTrack(f.route.Prefill), instanceTrack(f.route.Decode)
	if start := max(f.handoffNs, f.relayAtNs); f.pullNs > start { // on the decoder since its decode leg came
		t.Span(id, d, "wait for KV blocks", start, f.pullNs)
	}
	path, _ := c.cfg.Topology.AppendPath(c.pathScratch[:0], f.route.Prefill, f.route.Decode)
	c.pathScratch = path
	for k, l := range path {
		link := Track{Kind: TrackLink, Index: int(l)}
		t.Span(id, link, "KV transfer", f.pullNs, c.nowNs)
		if k == 0 {
			t.Flow(id, p, max(f.handoffNs, f.pullNs), link, f.pullNs)
		}
		if k == len(path)-1 {
			t.Flow(id, link, c.nowNs, d, c.nowNs)
		}
	}
}
