package scenarios

import (
	"math"
	"strings"
	"testing"

	"handoff/results"
	"handoff/sim"
)

// hpaStepDoc is a step of constant load — 50 requests a second from t = 0,
// fixed lengths — on a colocated pool of one instance that an HPA sizes on
// running requests per instance, 8 each.
const hpaStepDoc = `name: hpa-step
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 50ms}
workload:
  synthetic:
    duration: 10m
    arrival: {process: constant, rate: 50/s}
    input_tokens: {dist: fixed, value: 200}
    output_tokens: {dist: fixed, value: 100}
pools:
  - name: serve
    role: colocated
    count: 1
    hardware: h100-sxm
    autoscale: {policy: hpa, min: 1, max: 8, interval: 15s, provisioning: 30s,
                hpa: {metric: running, target: 8}}
`

// runFleet builds and runs doc, returning the one scaled pool's change
// points and the records.
func runFleet(t *testing.T, doc string) ([]sim.FleetPoint, []results.Record) {
	t.Helper()
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fleet) != 1 {
		t.Fatalf("%d pools in the fleet, want 1", len(res.Fleet))
	}
	return res.Fleet[0].Points, res.Records
}

// settled returns the first time the pool had n instances ready and none
// requested or draining, and the changes of its counts after that while
// the load lasted, to untilNs (-1 and nil if it never did).
func settled(points []sim.FleetPoint, n int, untilNs int64) (atNs int64, after []sim.FleetPoint) {
	atNs = -1
	for _, p := range points {
		switch {
		case p.AtNs >= untilNs:
			return atNs, after
		case atNs >= 0:
			after = append(after, p)
		case p.Ready == n && p.Requested == 0 && p.Draining == 0:
			atNs = p.AtNs
		}
	}
	return atNs, after
}

// The test: a step of constant load reaches the HPA's target count
// — ⌈total running requests / target⌉, the total measured by Little's law
// on the settled run — and stays there: no change after it is reached.
func TestHPAStepReachesTargetAndStays(t *testing.T) {
	points, recs := runFleet(t, hpaStepDoc)
	last := points[0]
	for _, p := range points {
		if p.AtNs < 600e9 { // while the load lasts
			last = p
		}
	}
	atNs, after := settled(points, last.Ready, 600e9)
	if atNs < 0 || len(after) > 0 || last.Ready < 2 {
		t.Fatalf("the pool did not settle at one count: %+v", points)
	}
	var busyNs float64
	n := 0
	for _, r := range recs {
		if r.ArrivalNs > atNs && r.Status == results.Completed {
			busyNs += float64(r.FinishNs - r.ArrivalNs)
			n++
		}
	}
	running := 50 * busyNs / float64(n) / 1e9 // Little: rate × time in the engine
	if want := int(math.Ceil(running / 8)); last.Ready != want {
		t.Errorf("settled at %d instances; %.1f requests running over a target of 8 want %d", last.Ready, running, want)
	}
	if atNs > 90e9 {
		t.Errorf("reached the target only at %.0f s: one decision, 30 s to provision, should do", float64(atNs)/1e9)
	}
}

// Without the scale-down stabilisation window, the same HPA on Poisson
// arrivals of the same rate follows every dip and rise of the running
// count: the check above catches it.
func TestHPAWithoutStabilisationFlaps(t *testing.T) {
	doc := strings.Replace(hpaStepDoc, "process: constant", "process: poisson", 1)
	doc = strings.Replace(doc, "target: 8}", "target: 8, scale_down: {stabilization: 0s}}", 1)
	points, _ := runFleet(t, doc)
	_, after := settled(points, 5, 600e9)
	if len(after) < 4 {
		t.Errorf("%d changes after first reaching 5 instances, want the pool to flap: %+v", len(after), points)
	}
	// With the default 300 s window, the noise no longer moves the count
	// down; the rises that remain are the ones the window does not cover.
	doc = strings.Replace(doc, ", scale_down: {stabilization: 0s}", "", 1)
	points, _ = runFleet(t, doc)
	_, steady := settled(points, 5, 600e9)
	t.Logf("%d changes without the window, %d with it", len(after), len(steady))
	if len(steady) >= len(after) {
		t.Errorf("the window did not damp the flapping: %d changes with it, %d without", len(steady), len(after))
	}
}

// slaStepDoc is constant load on a colocated pool the SLA planner sizes,
// without correction factors, so its count is what the capacity says.
const slaStepDoc = `name: sla-step
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 8ms}
workload:
  synthetic:
    duration: 4m
    arrival: {process: constant, rate: 300/s}
    input_tokens: {dist: fixed, value: 200}
    output_tokens: {dist: fixed, value: 100}
pools:
  - name: serve
    role: colocated
    count: 1
    hardware: h100-sxm
    autoscale: {policy: sla, min: 1, max: 8, interval: 30s, provisioning: 30s, sla: {correction: false}}
`

// Constant load under the SLA planner reaches the count the pool's
// capacity predicts — the larger of ⌈rate·isl / prefill tokens/s at the
// TTFT target⌉ and ⌈rate·osl / decode tokens/s at the TPOT target⌉ — and
// stays there.
func TestSLAStepReachesCapacityCount(t *testing.T) {
	_, b, err := parseBuild(t, slaStepDoc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := b.Config.Instances[0]
	capa := newPoolCapacity(in.Timer, in.Engine)
	prefill := math.Ceil(300 * 200 / capa.PrefillTokensPerSec(200, 500e6))
	decode := math.Ceil(300 * 100 / capa.DecodeTokensPerSec(200, 100, 8e6))
	want := int(max(prefill, decode))
	if want < 2 {
		t.Fatalf("the capacity predicts %d instance(s): the load does not exercise the planner", want)
	}
	points, _ := runFleet(t, slaStepDoc)
	atNs, after := settled(points, want, 240e9)
	if atNs < 0 || len(after) > 0 {
		t.Errorf("want %d instances (prefill %g, decode %g) reached and kept, got %+v", want, prefill, decode, points)
	}
}
