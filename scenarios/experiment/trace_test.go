package experiment

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"handoff/results"
	"handoff/sim/journey"
)

func TestTraceSelectionPicks(t *testing.T) {
	recs := []results.Record{
		{ID: 0, ArrivalNs: 0, FinishNs: 5, Status: results.Completed},
		{ID: 1, ArrivalNs: 1, FinishNs: 9, Status: results.Completed, Preemptions: 2},
		{ID: 2, ArrivalNs: 2, FinishNs: 4, Status: results.Rejected, Rejections: 8},
		{ID: 3, ArrivalNs: 3, FinishNs: 10, Status: results.Completed, Preemptions: 1},
	}
	for _, c := range []struct {
		sel  TraceSelection
		want []int64
	}{
		{TraceSelection{Kind: TracePreempted, Requests: 5}, []int64{1, 3}},
		{TraceSelection{Kind: TraceRejected, Requests: 5}, []int64{2}},
		{TraceSelection{Kind: TraceSlowest, Requests: 2}, []int64{1, 3}}, // E2E 8 and 7, then 0's 5
		{TraceSelection{Kind: TraceWindow, FromNs: 1, ToNs: 2, Requests: 5}, []int64{1, 2}},
	} {
		got, err := c.sel.Pick(recs, 10)
		if ids := slices.Sorted(maps.Keys(got)); err != nil || !slices.Equal(ids, c.want) {
			t.Errorf("%+v: %v, %v; want %v", c.sel, ids, err, c.want)
		}
	}
	if _, err := (TraceSelection{Kind: TraceWindow, FromNs: 11, ToNs: 20, Requests: 5}).Pick(recs, 10); err == nil ||
		!strings.Contains(err.Error(), "after the run's end") {
		t.Errorf("a window after the run: %v", err)
	}
	if _, err := (TraceSelection{Kind: TracePreempted, Requests: 5}).Pick(recs[:1], 10); err == nil ||
		!strings.Contains(err.Error(), "nothing to trace") {
		t.Errorf("nothing preempted: %v", err)
	}
}

// TestTraceTwoPass: the first requests are traced in the run itself; any
// other choice is not, and Retrace traces exactly what Pick chose from the
// finished run.
func TestTraceTwoPass(t *testing.T) {
	l := load(t)
	var rec *journey.Recorder
	first := TraceSelection{Kind: TraceFirst, Requests: 3}
	sum, res, err := Run(l, nil, first.Attach(&rec)...)
	if err != nil {
		t.Fatal(err)
	}
	if got := traced(t, rec); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("first 3 traced %v", got)
	}
	slow := TraceSelection{Kind: TraceSlowest, Requests: 3}
	if _, err := slow.Retrace(&Finished{Loaded: l, Summary: sum, Result: res}, nil); err == nil {
		t.Error("Retrace of a run that streamed its records: no error")
	}
	rec = nil
	if sum, res, err = Run(l, nil, slow.Attach(&rec)...); err != nil {
		t.Fatal(err)
	}
	if rec != nil || len(res.Records) != 50 {
		t.Fatalf("slowest: a tracer on the first run (it cannot know which requests) %v, %d records kept for Pick",
			rec != nil, len(res.Records))
	}
	want, err := slow.Pick(res.Records, res.SimTimeNs)
	if err != nil {
		t.Fatal(err)
	}
	rec, err = slow.Retrace(&Finished{Loaded: l, Summary: sum, Result: res}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := traced(t, rec); !slices.Equal(got, slices.Sorted(maps.Keys(want))) || len(got) != 3 {
		t.Errorf("retraced %v, want the 3 slowest %v", got, slices.Sorted(maps.Keys(want)))
	}
}

// traced returns the request IDs a trace's events name, in order.
func traced(t *testing.T, rec *journey.Recorder) []int64 {
	t.Helper()
	if rec == nil {
		t.Fatal("no recorder")
	}
	var buf bytes.Buffer
	if err := rec.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, e := range doc.TraceEvents {
		if id, ok := e.Args["request"].(float64); ok {
			ids[int64(id)] = true
		}
	}
	return slices.Sorted(maps.Keys(ids))
}
