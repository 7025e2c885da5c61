package sim

import "handoff/results"

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

// Tracer receives the journeys of the first requests of a run, for a
// request-journey trace (Chrome trace-event JSON, which Perfetto loads). The
// core calls it synchronously and never reads anything back; a nil Tracer
// costs one branch per phase. IDs are request IDs; times are ns.
type Tracer interface {
	// Span is a phase of request id on a track, from startNs to endNs.
	Span(id int64, t Track, name string, startNs, endNs int64)
	// Instant is a point event (a preemption, a rejection, a first token).
	Instant(id int64, t Track, name string, atNs int64)
	// Flow links the end of one phase to the start of the next across
	// tracks (prefill → transfer → decode).
	Flow(id int64, from Track, fromNs int64, to Track, toNs int64)
}

// traced reports whether request id's journey goes to the tracer.
func (c *cluster) traced(id int64) bool {
	return c.cfg.Tracer != nil && id < c.cfg.TraceRequests
}

func instanceTrack(i int) Track { return Track{Kind: TrackInstance, Index: i} }

// traceLeave records the span of the phase flight f leaves for to: the
// router queue and placement, the prefill, the KV transfer (with the wait
// for decoder blocks before it), and the decode.
func (c *cluster) traceLeave(f *flight, from, to phase) {
	switch {
	case from == phaseFrontend:
		c.cfg.Tracer.Span(f.req.ID, Track{Kind: TrackRouter}, "frontend", f.req.ArrivalNs, c.nowNs)
	case to == phasePrefilling:
		c.traceRoute(f)
	case from.prefill() && !to.prefill() && to != phaseRejected:
		c.cfg.Tracer.Span(f.req.ID, instanceTrack(f.route.Prefill), "prefill", f.enqueuedNs, c.nowNs)
		if from == phaseStreamed {
			c.traceTransfer(f)
		}
	case from == phaseTransferring:
		c.traceTransfer(f)
	case from == phaseStarting || from == phaseDecoding:
		if to == phaseDone || to == phaseRejected {
			c.cfg.Tracer.Span(f.req.ID, instanceTrack(decodingInstance(f)), "decode", f.decodeNs, c.nowNs)
		}
	}
}

// traceRoute records the placement and any router queueing.
func (c *cluster) traceRoute(f *flight) {
	t, id := c.cfg.Tracer, f.req.ID
	router := Track{Kind: TrackRouter}
	if start := f.req.ArrivalNs + c.records[id].Time[results.TFrontend]; f.attempt == 0 && c.nowNs > start {
		t.Span(id, router, "router queue", start, c.nowNs)
	}
	name := "route → " + c.cfg.Instances[f.route.Prefill].Name
	if f.route.Decode >= 0 { // not yet chosen when the router picks it after the prefill
		name += " → " + c.cfg.Instances[f.route.Decode].Name
	}
	t.Instant(id, router, name, c.nowNs)
	t.Flow(id, router, c.nowNs, instanceTrack(f.route.Prefill), c.nowNs)
}

// traceTransfer records a finished KV transfer on every link it crossed,
// the wait for decoder blocks before it, and the flows joining them.
func (c *cluster) traceTransfer(f *flight) {
	t, id := c.cfg.Tracer, f.req.ID
	p, d := instanceTrack(f.route.Prefill), instanceTrack(f.route.Decode)
	if f.pullNs > f.handoffNs {
		t.Span(id, d, "wait for KV blocks", f.handoffNs, f.pullNs)
	}
	path, _ := c.cfg.Topology.Path(f.route.Prefill, f.route.Decode)
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
