package sweepdir_test

import (
	"bytes"
	"strings"
	"testing"

	"handoff/results"
	"handoff/results/sweepdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
)

// TestCheckSummary holds summaries to the schema this build writes.
func TestCheckSummary(t *testing.T) {
	l, err := scenarios.Load("../../scenarios/quickstart.yaml", scenarios.Set{Path: "workload.synthetic.requests", Value: "20"})
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := experiment.Run(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := results.WriteJSON(&buf, sum); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for _, tc := range []struct{ name, data, want string }{
		{"sound", good, ""},
		{"empty", "{}", `no "abandon_reasons" (of `},
		{"old key", strings.Replace(good, `"request_goodput_rps"`, `"goodput_rps"`, 1), `unknown field "goodput_rps"`},
		{"another scenario", strings.Replace(good, `"scenario": "quickstart"`, `"scenario": "other"`, 1), `of scenario "other"`},
		{"counts", strings.Replace(good, `"completed": 20`, `"completed": 19`, 1), "do not add up"},
		{"not JSON", good[:40], "unexpected end"},
	} {
		err := sweepdir.CheckSummary([]byte(tc.data), "quickstart")
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
