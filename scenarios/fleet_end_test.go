package scenarios

import (
	"strings"
	"testing"

	"handoff/sim"
)

// TestScaledRunEndsWithItsRequests: the quickstart's P/D fleet with its
// decode pool on a schedule. Each prefill holds its KV for the default
// 480 s unless pulled; every pull lands at once, so the hold deadlines are
// moot, but they stay queued. The fleet's periodic decisions must not
// keep the clock going until the last of them: the scaled run ends within
// one adjustment interval of its fixed twin.
func TestScaledRunEndsWithItsRequests(t *testing.T) {
	fixed := strings.Replace(quickstartDoc, "    preemption: recompute\n", "    count: 1\n    preemption: recompute\n", 1)
	scaled := strings.Replace(fixed, "    preemption: recompute\n", "    preemption: recompute\n"+
		"    autoscale: {policy: schedule, min: 1, max: 3, interval: 1s, provisioning: 500ms,\n"+
		"                schedule: [{at: 1s, count: 3}, {at: 3s, count: 2}]}\n", 1)
	end := func(doc string) int64 {
		_, b, err := parseBuild(t, doc, "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(b.Config)
		if err != nil {
			t.Fatal(err)
		}
		return res.SimTimeNs
	}
	f, s := end(fixed), end(scaled)
	if f > 60e9 {
		t.Fatalf("fixed run ends at %d ns: the test expects a run of seconds", f)
	}
	if s > f+1e9 {
		t.Errorf("scaled run ends at %.3f s, its fixed twin at %.3f s: fleet events outlived the requests", float64(s)/1e9, float64(f)/1e9)
	}
}

// quickstartDoc is the quickstart's fleet with the decode pool's count
// left for the test to write.
const quickstartDoc = `name: q
seed: 1
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 50ms, attainment: 0.9}
workload:
  synthetic:
    requests: 100
    arrival: {process: poisson, rate: 20/s}
    input_tokens: {dist: lognormal, mean: 1024, stddev: 512}
    output_tokens: {dist: uniform, min: 64, max: 512}
pools:
  - name: prefill
    role: prefill
    count: 2
    hardware: h100-sxm
    tp: 1
  - name: decode
    role: decode
    hardware: h100-sxm
    tp: 1
    preemption: recompute
link: {kind: nvlink4}
router: {policy: round_robin}
`
