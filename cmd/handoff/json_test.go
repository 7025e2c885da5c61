package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONOutputs: --json prints one JSON document on stdout, with the
// answers the tables print, for goodput, plan and calibrate.
func TestJSONOutputs(t *testing.T) {
	for _, c := range []struct {
		args []string
		keys []string
	}{
		{[]string{"goodput", quickstart, "--set", "workload.synthetic.requests=200", "--max-runs", "4", "--json"},
			[]string{"curve", "max_goodput", "max_goodput_each", "target", "gpus"}},
		{[]string{"plan", quickstart, "--target-rate", "60", "--set", smallSets[0], "--count", "prefill=1:2",
			"--count", "decode=1:2", "--json"}, []string{"runs", "chosen", "fleets_run", "target_rate_rps"}},
		{[]string{"calibrate", "--dir", "../../scenarios/calibration", "--pd=false", "--json"}, []string{"stages", "pd_runs"}},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.args[0], code, stderr)
		}
		var doc map[string]json.RawMessage
		dec := json.NewDecoder(strings.NewReader(stdout))
		if err := dec.Decode(&doc); err != nil || dec.More() {
			t.Fatalf("%s: stdout is not one JSON document (%v): %.200s", c.args[0], err, stdout)
		}
		for _, k := range c.keys {
			if _, ok := doc[k]; !ok {
				t.Errorf("%s --json: no %q", c.args[0], k)
			}
		}
	}
}
