package scenarios

import (
	"strings"
	"testing"

	"handoff/sim"
)

// TestBurstSpreadsOverDecoders: a closed loop's first wave arrives at one
// instant; least_loaded counts requests routed to a decoder from routing
// on, so the wave spreads evenly instead of piling on the first decoder,
// and so does vLLM's balancer over a data-parallel group's ranks.
func TestBurstSpreadsOverDecoders(t *testing.T) {
	for name, decode := range map[string]string{
		"instances": "count: 4, tp: 8",
		"dp ranks":  "tp: 1, dp: 8, ep: 8",
	} {
		doc := moeScenario(decode) + "router: {policy: least_loaded}\n"
		doc = replaceOnce(t, doc, "workload:\n", "workload:\n  client: {concurrency: 64, requests: 64}\n")
		doc = replaceOnce(t, doc, "requests: 20", "requests: 64")
		_, b, err := parseBuild(t, doc, "m.yaml")
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(b.Config)
		if err != nil {
			t.Fatal(err)
		}
		per := map[int32]int{}
		for _, r := range res.Records {
			per[r.DecodeInstance]++
		}
		ranks := 4
		if name == "dp ranks" {
			ranks = 8
		}
		if len(per) != ranks {
			t.Errorf("%s: 64 requests went to %d decoders, want all %d: %v", name, len(per), ranks, per)
		}
		for d, n := range per {
			if n != 64/ranks {
				t.Errorf("%s: decoder %d took %d of 64, want %d", name, d, n, 64/ranks)
			}
		}
	}
}

// replaceOnce replaces the first old in s, failing the test if there is none.
func replaceOnce(t *testing.T, s, old, repl string) string {
	t.Helper()
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("no %q in the scenario", old)
	}
	return s[:i] + repl + s[i+len(old):]
}
