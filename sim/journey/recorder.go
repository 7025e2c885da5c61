// Package journey records the journeys of a run's first requests through
// the cluster (router → prefill instance → links → decode instance) and
// writes them as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev)
// and chrome://tracing load.
//
// It lives under sim because it implements sim.Tracer: sim/journey imports
// sim, sim never imports it, so there is no cycle, no adapter, and no
// import from results back up to the simulator.
//
// Reading guide: recorder.go buffers what the simulator reports; layout.go
// packs the phases of concurrent requests onto non-overlapping lanes (the
// trace format forbids partially overlapping slices on one thread) and binds
// each flow arrow to a slice; write.go writes the JSON.
package journey

import (
	"fmt"

	"handoff/sim"
)

// Recorder is a sim.Tracer that buffers the phases of requests with ID
// below its limit and writes them with WriteJSON. Memory is proportional to
// the events of the traced requests (a handful per phase); it ignores every
// other request. Not safe for concurrent use (the simulator calls it from
// one goroutine).
type Recorder struct {
	keep      func(id int64) bool
	instances []string // thread names, per instance index
	links     []string // per link index
	items     []item
	flows     []flow
	counters  []counter
}

// counter is one value of an instance's counter from atNs on.
type counter struct {
	track sim.Track
	name  string
	atNs  int64
	value float64
}

var _ sim.Tracer = (*Recorder)(nil)

// item is a span, or an instant when instant is set (startNs == endNs).
// An instance's own span (a lock-up) has id ownID.
type item struct {
	id             int64
	track          sim.Track
	name           string
	startNs, endNs int64
	instant        bool
	seq            int // recording order, the last tiebreak
}

// ownID is the id of an instance's own spans: no request's, and laid out
// as one more group on its track, before the requests'.
const ownID = -1

// flow is an arrow from one track to another.
type flow struct {
	id           int64
	from, to     sim.Track
	fromNs, toNs int64
}

// Attach returns a Recorder for the requests of cfg with ID below n and
// installs it as cfg's tracer (cfg.Tracer, cfg.TraceRequests). It takes
// the track names from cfg: instance names, pools and roles, and the
// topology's link names. It panics if n ≤ 0 (the caller validates user
// input). Cost: O(instances + links).
func Attach(cfg *sim.Config, n int64) *Recorder {
	if n <= 0 {
		panic("journey: non-positive request count")
	}
	r := newRecorder(cfg, func(id int64) bool { return id < n })
	cfg.Tracer, cfg.TraceRequests = r, n
	return r
}

// AttachSelected is Attach for the requests pick chooses (by ID).
func AttachSelected(cfg *sim.Config, pick func(id int64) bool) *Recorder {
	r := newRecorder(cfg, pick)
	cfg.Tracer, cfg.TraceSelect = r, pick
	return r
}

// newRecorder names the tracks from cfg.
func newRecorder(cfg *sim.Config, keep func(id int64) bool) *Recorder {
	r := &Recorder{keep: keep}
	for _, in := range cfg.Instances {
		r.instances = append(r.instances, fmt.Sprintf("%s (pool %s, %s)", in.Name, in.Pool, in.Role))
	}
	if cfg.Topology != nil {
		r.links = append(r.links, cfg.Topology.Names...)
	}
	return r
}

// Counter records an instance's counter value from atNs on (sim.Tracer).
func (r *Recorder) Counter(t sim.Track, name string, atNs int64, value float64) {
	r.counters = append(r.counters, counter{track: t, name: name, atNs: atNs, value: value})
}

// Span records a phase of request id on track t from startNs to endNs
// (sim.Tracer). An end before the start is clamped to the start.
func (r *Recorder) Span(id int64, t sim.Track, name string, startNs, endNs int64) {
	if !r.keep(id) {
		return
	}
	r.items = append(r.items, item{id: id, track: t, name: name, startNs: startNs,
		endNs: max(endNs, startNs), seq: len(r.items)})
}

// InstanceSpan records a spell of an instance's own, such as a lock-up,
// on track t from startNs to endNs (sim.Tracer). It is kept whatever
// requests are traced.
func (r *Recorder) InstanceSpan(t sim.Track, name string, startNs, endNs int64) {
	r.items = append(r.items, item{id: ownID, track: t, name: name, startNs: startNs,
		endNs: max(endNs, startNs), seq: len(r.items)})
}

// Instant records a point event of request id on track t (sim.Tracer).
func (r *Recorder) Instant(id int64, t sim.Track, name string, atNs int64) {
	if !r.keep(id) {
		return
	}
	r.items = append(r.items, item{id: id, track: t, name: name, startNs: atNs, endNs: atNs,
		instant: true, seq: len(r.items)})
}

// Flow records an arrow of request id from track from at fromNs to track
// to at toNs (sim.Tracer).
func (r *Recorder) Flow(id int64, from sim.Track, fromNs int64, to sim.Track, toNs int64) {
	if !r.keep(id) {
		return
	}
	r.flows = append(r.flows, flow{id: id, from: from, to: to, fromNs: fromNs, toNs: toNs})
}
