package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTraceFlags checks the parsing of --trace and --trace-requests:
// the default follows 100 requests, and a count ≤ 0, or --trace-requests
// or --trace-select without --trace, is refused before the run.
func TestRunTraceFlags(t *testing.T) {
	tests := []struct {
		args     []string
		path     string
		requests int64
		err      string
	}{
		{[]string{"s.yaml"}, "", 100, ""},
		{[]string{"s.yaml", "--trace", "t.json"}, "t.json", 100, ""},
		{[]string{"s.yaml", "--trace", "t.json", "--trace-requests", "7"}, "t.json", 7, ""},
		{[]string{"s.yaml", "--trace", "t.json", "--trace-requests", "0"}, "", 0, "--trace-requests must be positive, got 0"},
		{[]string{"s.yaml", "--trace", "t.json", "--trace-requests", "-3"}, "", 0, "--trace-requests must be positive, got -3"},
		{[]string{"s.yaml", "--trace-requests", "7"}, "", 0,
			"--trace-requests chooses the requests --trace follows, and there is no --trace: add --trace FILE, or drop --trace-requests"},
		{[]string{"s.yaml", "--trace-select", "slowest"}, "", 0,
			"--trace-select chooses the requests --trace follows, and there is no --trace: add --trace FILE, or drop --trace-select"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got *runOptions
			cmd := newRunCmd(&bytes.Buffer{}, &bytes.Buffer{}, func(o *runOptions, _ io.Writer) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.Execute()
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || got != nil {
					t.Errorf("error %v (ran: %v), want %q before the run", err, got != nil, tc.err)
				}
				return
			}
			if err != nil || got == nil || got.tracePath != tc.path || got.traceRequests != tc.requests {
				t.Errorf("options %+v, error %v; want trace %q for %d requests", got, err, tc.path, tc.requests)
			}
		})
	}
}

// TestRunWritesTrace runs the quickstart with --trace and checks the file
// is a trace-event JSON object following exactly the first 5 requests.
func TestRunWritesTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journey.json")
	code, _, stderr := runCLI(t, "run", quickstart, "--set", "workload.synthetic.requests=40",
		"--trace", path, "--trace-requests", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string `json:"ph"`
			Args struct {
				Request *int64 `json:"request"`
			} `json:"args"`
		} `json:"traceEvents"`
		DisplayTimeUnit string `json:"displayTimeUnit"`
	}
	if err := json.Unmarshal(readFile(t, path), &doc); err != nil {
		t.Fatalf("trace: %v", err)
	}
	seen := map[int64]bool{}
	for i, e := range doc.TraceEvents {
		if e.Ph == "M" || e.Ph == "C" { // metadata, and the instances' counters
			continue
		}
		if e.Args.Request == nil || *e.Args.Request < 0 || *e.Args.Request >= 5 {
			t.Fatalf("event %d (%s) has request %v, want one of the first 5", i, e.Ph, e.Args.Request)
		}
		seen[*e.Args.Request] = true
	}
	if len(seen) != 5 || doc.DisplayTimeUnit != "ms" {
		t.Errorf("trace follows %d requests (want 5), displayTimeUnit %q", len(seen), doc.DisplayTimeUnit)
	}

	code, _, stderr = runCLI(t, "run", quickstart, "--trace", path, "--trace-requests", "0")
	if code == 0 || !strings.Contains(stderr, "--trace-requests must be positive") {
		t.Errorf("--trace-requests 0: exit %d, stderr %q; want an error", code, stderr)
	}
}
