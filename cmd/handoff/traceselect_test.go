package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/scenarios/experiment"
)

func TestParseTraceSelect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want experiment.TraceSelection
		err  string
	}{
		{"first", experiment.TraceSelection{Kind: experiment.TraceFirst, Requests: 7}, ""},
		{"slowest", experiment.TraceSelection{Kind: experiment.TraceSlowest, Requests: 7}, ""},
		{"window=10s,20s", experiment.TraceSelection{Kind: experiment.TraceWindow, FromNs: 10e9, ToNs: 20e9, Requests: 7}, ""},
		{"window=20s,10s", experiment.TraceSelection{}, "0 ≤ START ≤ END"},
		{"window=10s", experiment.TraceSelection{}, "0 ≤ START ≤ END"},
		{"fastest", experiment.TraceSelection{}, "want first, preempted"},
	} {
		got, err := parseTraceSelect(c.in, 7)
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) || c.err == "" && (err != nil || got != c.want) {
			t.Errorf("%s: %+v, %v; want %+v, %q", c.in, got, err, c.want, c.err)
		}
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
