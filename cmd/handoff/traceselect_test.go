package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
)

func TestParseTraceSelect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want traceSelection
		err  string
	}{
		{"first", traceSelection{kind: "first"}, ""},
		{"slowest", traceSelection{kind: "slowest"}, ""},
		{"window=10s,20s", traceSelection{kind: "window", fromNs: 10e9, toNs: 20e9}, ""},
		{"window=20s,10s", traceSelection{}, "0 ≤ START ≤ END"},
		{"window=10s", traceSelection{}, "0 ≤ START ≤ END"},
		{"fastest", traceSelection{}, "want first, preempted"},
	} {
		got, err := parseTraceSelect(c.in)
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) || c.err == "" && (err != nil || got != c.want) {
			t.Errorf("%s: %+v, %v; want %+v, %q", c.in, got, err, c.want, c.err)
		}
	}
}

func TestTraceSelectionPicks(t *testing.T) {
	recs := []results.Record{
		{ID: 0, ArrivalNs: 0, FinishNs: 5, Status: results.Completed},
		{ID: 1, ArrivalNs: 1, FinishNs: 9, Status: results.Completed, Preemptions: 2},
		{ID: 2, ArrivalNs: 2, FinishNs: 4, Status: results.Rejected, Rejections: 8},
		{ID: 3, ArrivalNs: 3, FinishNs: 10, Status: results.Completed, Preemptions: 1},
	}
	for _, c := range []struct {
		sel  traceSelection
		n    int64
		want []int64
	}{
		{traceSelection{kind: "preempted"}, 5, []int64{1, 3}},
		{traceSelection{kind: "rejected"}, 5, []int64{2}},
		{traceSelection{kind: "slowest"}, 2, []int64{1, 3}}, // E2E 8 and 7, then 0's 5
		{traceSelection{kind: "window", fromNs: 1, toNs: 2}, 5, []int64{1, 2}},
	} {
		got, err := c.sel.pick(recs, c.n, 10)
		var ids []int64
		for id := range got {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if err != nil || !slices.Equal(ids, c.want) {
			t.Errorf("%+v: %v, %v; want %v", c.sel, ids, err, c.want)
		}
	}
	if _, err := (traceSelection{kind: "window", fromNs: 11, toNs: 20}).pick(recs, 5, 10); err == nil ||
		!strings.Contains(err.Error(), "after the run's end") {
		t.Errorf("a window after the run: %v", err)
	}
	if _, err := (traceSelection{kind: "preempted"}).pick(recs[:1], 5, 10); err == nil ||
		!strings.Contains(err.Error(), "nothing to trace") {
		t.Errorf("nothing preempted: %v", err)
	}
}

// TestTraceSelectSlowest: the trace follows exactly the slowest requests
// of the run, with their instances' counters.
func TestTraceSelectSlowest(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.json")
	code, _, stderr := runCLI(t, "run", "../../scenarios/quickstart.yaml", "-o", filepath.Join(dir, "out"),
		"--trace", trace, "--trace-select", "slowest", "--trace-requests", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	traced, counters := map[int64]bool{}, 0
	for _, e := range doc.TraceEvents {
		if id, ok := e.Args["request"].(float64); ok {
			traced[int64(id)] = true
		}
		if e.Ph == "C" {
			counters++
		}
	}
	if len(traced) != 3 || counters == 0 {
		t.Fatalf("traced %v with %d counter events, want 3 requests and counters", traced, counters)
	}
	slowestUntraced, fastestTraced := 0.0, 1e18 // E2E of completed requests, from requests.csv (µs)
	lines := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "out", "requests.csv")))), "\n")
	for _, line := range lines[1:] {
		f := strings.Split(line, ",")
		var id int64
		var e2e float64
		if _, err := fmt.Sscan(f[0], &id); err != nil || f[11] != "completed" {
			continue
		}
		fmt.Sscan(f[9], &e2e)
		if traced[id] {
			fastestTraced = min(fastestTraced, e2e)
		} else {
			slowestUntraced = max(slowestUntraced, e2e)
		}
	}
	if fastestTraced+1e-6 < slowestUntraced {
		t.Errorf("a traced request took %g s, an untraced one %g s: not the slowest", fastestTraced, slowestUntraced)
	}
}
