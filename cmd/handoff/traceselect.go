package main

import (
	"fmt"
	"slices"
	"strings"

	"handoff/models/units"
	"handoff/results"
)

// traceSelection is --trace-select: which requests --trace follows. first
// is the first N requests (known before the run); the others are chosen
// from a finished run's records, so the run is simulated again with the
// tracer on them (the simulator is deterministic: the same run).
type traceSelection struct {
	kind         string // first | preempted | rejected | slowest | window
	fromNs, toNs int64  // window: arrivals in [from, to]
}

// traceSelectHelp is the flag's help.
const traceSelectHelp = "which requests --trace follows, at most --trace-requests of them: `first` (the first), " +
	"preempted, rejected (refused by a decoder), slowest (longest end to end), or window=START,END " +
	"(arriving between two times, e.g. window=10s,20s); all but first simulate the run twice"

// parseTraceSelect reads the flag's value.
func parseTraceSelect(s string) (traceSelection, error) {
	switch s {
	case "first", "preempted", "rejected", "slowest":
		return traceSelection{kind: s}, nil
	}
	rest, ok := strings.CutPrefix(s, "window=")
	if !ok {
		return traceSelection{}, fmt.Errorf("--trace-select %q: want first, preempted, rejected, slowest or window=START,END", s)
	}
	a, b, ok := strings.Cut(rest, ",")
	from, err1 := units.ParseDuration(strings.TrimSpace(a))
	to, err2 := units.ParseDuration(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || from < 0 || to < from {
		return traceSelection{}, fmt.Errorf("--trace-select %q: want window=START,END with 0 ≤ START ≤ END, e.g. window=10s,20s", s)
	}
	return traceSelection{kind: "window", fromNs: from, toNs: to}, nil
}

// pick chooses at most n request IDs from a run's records (by ID, in
// arrival order, the slowest first for slowest). An empty choice is an
// error that says why.
func (ts traceSelection) pick(recs []results.Record, n int64, simNs int64) (map[int64]bool, error) {
	var ids []int64
	switch ts.kind {
	case "preempted":
		ids = idsWhere(recs, func(r *results.Record) bool { return r.Preemptions > 0 })
	case "rejected":
		ids = idsWhere(recs, func(r *results.Record) bool { return r.Rejections > 0 || r.Status == results.Rejected })
	case "slowest":
		ids = slowest(recs)
	case "window":
		if ts.fromNs > simNs {
			return nil, fmt.Errorf("--trace-select window starts at %s, after the run's end at %s",
				units.FormatDuration(ts.fromNs), units.FormatDuration(simNs))
		}
		ids = idsWhere(recs, func(r *results.Record) bool { return r.ArrivalNs >= ts.fromNs && r.ArrivalNs <= ts.toNs })
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("--trace-select %s: no request of the run is one: there is nothing to trace", ts.kind)
	}
	chosen := map[int64]bool{}
	for _, id := range ids[:min(int64(len(ids)), n)] {
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
