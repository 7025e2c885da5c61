package experiment

import (
	"fmt"
	"slices"

	"handoff/models/units"
	"handoff/results"
	"handoff/sim"
	"handoff/sim/journey"
)

// TraceKind names which requests a run's journey trace follows (handoff
// run --trace-select).
type TraceKind string

// The trace kinds. TraceFirst is known before the run, which traces them
// as it goes; the others are chosen from a finished run's records, and
// Retrace simulates the run again with the tracer on them (the simulator
// is deterministic: the same run).
const (
	TraceFirst     TraceKind = "first"     // the first requests, by ID
	TracePreempted TraceKind = "preempted" // preempted at least once
	TraceRejected  TraceKind = "rejected"  // refused by a decoder at least once, or never served
	TraceSlowest   TraceKind = "slowest"   // completed, the longest end to end first
	TraceWindow    TraceKind = "window"    // arriving in [FromNs, ToNs]
)

// TraceSelection is which requests a run's journey trace follows, at most
// Requests of them.
type TraceSelection struct {
	Kind         TraceKind
	FromNs, ToNs int64 // TraceWindow: arrivals in [FromNs, ToNs]
	Requests     int64 // > 0
}

// Attach returns the configure functions that trace the run itself into
// *rec when the choice is known before the run (TraceFirst): the tracer,
// and the timeline the trace's counters need. Otherwise it returns
// KeepRecords: Retrace the finished run instead, choosing from its
// records.
func (ts TraceSelection) Attach(rec **journey.Recorder) []func(*sim.Config) {
	if ts.Kind != TraceFirst {
		return []func(*sim.Config){KeepRecords}
	}
	return []func(*sim.Config){WithTimeline, func(cfg *sim.Config) { *rec = journey.Attach(cfg, ts.Requests) }}
}

// Retrace simulates a finished run once more (simulate: nil is Run, its
// warnings dropped) with a tracer on the requests Pick chooses from its
// records.
func (ts TraceSelection) Retrace(run *Finished, simulate Simulate) (*journey.Recorder, error) {
	if run.Result.Records == nil {
		return nil, fmt.Errorf("--trace-select %s chooses from the run's records, which it did not keep (see Attach)", ts.Kind)
	}
	ids, err := ts.Pick(run.Result.Records, run.Result.SimTimeNs)
	if err != nil {
		return nil, err
	}
	var rec *journey.Recorder
	_, _, err = simulate.Or(nil)(run.Loaded, WithTimeline, func(cfg *sim.Config) {
		rec = journey.AttachSelected(cfg, func(id int64) bool { return ids[id] })
	})
	return rec, err
}

// Pick chooses at most ts.Requests request IDs from a run's records (by
// ID, in arrival order, the slowest first for TraceSlowest) that ended at
// simNs. An empty choice is an error that says why. Cost: O(records), and
// a sort for TraceSlowest.
func (ts TraceSelection) Pick(recs []results.Record, simNs int64) (map[int64]bool, error) {
	var ids []int64
	switch ts.Kind {
	case TracePreempted:
		ids = idsWhere(recs, func(r *results.Record) bool { return r.Preemptions > 0 })
	case TraceRejected:
		ids = idsWhere(recs, func(r *results.Record) bool { return r.Rejections > 0 || r.Status == results.Rejected })
	case TraceSlowest:
		ids = slowest(recs)
	case TraceWindow:
		if ts.FromNs > simNs {
			return nil, fmt.Errorf("--trace-select window starts at %s, after the run's end at %s",
				units.FormatDuration(ts.FromNs), units.FormatDuration(simNs))
		}
		ids = idsWhere(recs, func(r *results.Record) bool { return r.ArrivalNs >= ts.FromNs && r.ArrivalNs <= ts.ToNs })
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("--trace-select %s: no request of the run is one: there is nothing to trace", ts.Kind)
	}
	chosen := map[int64]bool{}
	for _, id := range ids[:min(int64(len(ids)), ts.Requests)] {
		chosen[id] = true
	}
	return chosen, nil
}

func idsWhere(recs []results.Record, keep func(*results.Record) bool) []int64 {
	var ids []int64
	for i := range recs {
		if keep(&recs[i]) {
			ids = append(ids, recs[i].ID)
		}
	}
	return ids
}

// slowest is the completed requests' IDs, the longest end to end first
// (ties by ID).
func slowest(recs []results.Record) []int64 {
	done := idsWhere(recs, func(r *results.Record) bool { return r.Status == results.Completed })
	e2e := func(id int64) int64 { return recs[id].FinishNs - recs[id].ArrivalNs }
	slices.SortStableFunc(done, func(a, b int64) int { return int(min(1, max(-1, e2e(b)-e2e(a)))) }) // ties keep ID order
	return done
}
