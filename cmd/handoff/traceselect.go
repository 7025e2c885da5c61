package main

import (
	"fmt"
	"strings"

	"handoff/models/units"
	"handoff/scenarios/experiment"
)

// traceSelectHelp is the flag's help.
const traceSelectHelp = "which requests --trace follows, at most --trace-requests of them: `first` (the first), " +
	"preempted, rejected (refused by a decoder), slowest (longest end to end), or window=START,END " +
	"(arriving between two times, e.g. window=10s,20s); all but first simulate the run twice"

// parseTraceSelect reads --trace-select's value into the selection of
// --trace-requests requests (experiment.TraceSelection, which chooses them).
func parseTraceSelect(s string, requests int64) (experiment.TraceSelection, error) {
	switch k := experiment.TraceKind(s); k {
	case experiment.TraceFirst, experiment.TracePreempted, experiment.TraceRejected, experiment.TraceSlowest:
		return experiment.TraceSelection{Kind: k, Requests: requests}, nil
	}
	rest, ok := strings.CutPrefix(s, "window=")
	if !ok {
		return experiment.TraceSelection{}, fmt.Errorf("--trace-select %q: want first, preempted, rejected, slowest or window=START,END", s)
	}
	a, b, ok := strings.Cut(rest, ",")
	from, err1 := units.ParseDuration(strings.TrimSpace(a))
	to, err2 := units.ParseDuration(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || from < 0 || to < from {
		return experiment.TraceSelection{}, fmt.Errorf("--trace-select %q: want window=START,END with 0 ≤ START ≤ END, e.g. window=10s,20s", s)
	}
	return experiment.TraceSelection{Kind: experiment.TraceWindow, FromNs: from, ToNs: to, Requests: requests}, nil
}
