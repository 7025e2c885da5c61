package autoscale

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"handoff/models/units"
)

const intervalNs = 15e9 // the HPA controller's default sync period

// pool is a toy pool the tests drive: instances become ready provisionSteps
// decisions after they are requested; the load is a total number of
// running requests spread over the ready instances.
type pool struct {
	ready, requested int
	pending          []int // instances becoming ready at each of the next decisions
	min, max         int
}

// decide shows p to the policy at step k with the given total running
// requests and noise factor, then applies the policy's answer.
func (p *pool) decide(pol Policy, k int, totalRunning, noise float64) int {
	if len(p.pending) > 0 {
		p.ready += p.pending[0]
		p.requested -= p.pending[0]
		p.pending = p.pending[1:]
	}
	o := Observation{NowNs: int64(k) * intervalNs, IntervalNs: intervalNs, Ready: p.ready, Requested: p.requested,
		MinInstances: p.min, MaxInstances: p.max}
	if p.ready > 0 {
		o.Running = totalRunning / float64(p.ready) * noise
	}
	want := pol.Desired(&o)
	if p.max > 0 && want > p.max || want < p.min {
		panic("policy answered outside the pool's bounds")
	}
	cur := o.Current()
	switch {
	case want > cur:
		p.requested += want - cur
		p.pending = append(p.pending, want-cur)
	case want < cur:
		p.ready -= cur - want // drain at once (the toy pool has no draining state)
	}
	return want
}

func runningHPA(target float64) HPA {
	return HPA{Metric: MetricRunning, Target: target}
}

// A step of constant load, observed with noise inside the tolerance, brings
// the pool to ceil(load/target) and keeps it there: no flapping.
func TestHPAStepReachesTargetAndStays(t *testing.T) {
	pol := NewHPA(runningHPA(5))
	p := &pool{ready: 1, min: 1, max: 100}
	rng := rand.New(rand.NewPCG(1, 2))
	var counts []int
	for k := range 200 {
		noise := 1 + 0.09*(2*rng.Float64()-1) // inside the 0.1 tolerance
		counts = append(counts, p.decide(pol, k, 40, noise))
	}
	reached := -1
	for k, c := range counts {
		if c == 8 {
			reached = k
			break
		}
	}
	if reached < 0 || reached > 10 {
		t.Fatalf("never reached 8 instances within 10 decisions: %v", counts[:20])
	}
	for k := reached; k < len(counts); k++ {
		if counts[k] != 8 {
			t.Fatalf("count left 8 at decision %d: %v", k, counts[reached:k+1])
		}
	}
}

// Without the tolerance the same noise makes the count move: the test
// above can fail.
func TestHPANoToleranceFlaps(t *testing.T) {
	zero := 0.0
	h := runningHPA(5)
	h.Tolerance = &zero
	win := units.Duration(0)
	h.ScaleDown.Stabilization = &win
	pol := NewHPA(h)
	p := &pool{ready: 8, min: 1, max: 100}
	rng := rand.New(rand.NewPCG(1, 2))
	changes := 0
	prev := 8
	for k := range 100 {
		c := p.decide(pol, k, 40, 1+0.09*(2*rng.Float64()-1))
		if c != prev {
			changes++
		}
		prev = c
	}
	if changes == 0 {
		t.Fatal("noise never moved an untolerant, unstabilised HPA: the no-flapping test proves nothing")
	}
}

// After the load halves, the count holds for the 300 s scale-down window,
// then falls to the new recommendation at once (the default scale-down
// limit is 100 % per 15 s).
func TestHPAScaleDownWaitsForWindow(t *testing.T) {
	pol := NewHPA(runningHPA(5))
	p := &pool{ready: 8, min: 1}
	for k := range 10 {
		if c := p.decide(pol, k, 40, 1); c != 8 {
			t.Fatalf("decision %d: %d instances at steady load, want 8", k, c)
		}
	}
	// The load drops at decision 10 (t = 150 s); the last recommendation
	// of 8 was at t = 135 s, so the window holds 8 until 135 + 300 s.
	for k := 10; k < 40; k++ {
		c := p.decide(pol, k, 20, 1)
		tNs := int64(k) * intervalNs
		want := 8
		if tNs >= 135e9+300e9 {
			want = 4
		}
		if c != want {
			t.Fatalf("t = %ds: %d instances, want %d", tNs/1e9, c, want)
		}
	}
}

// The default scale-up limit is the larger of +4 instances and +100 % per
// 15 s; a custom limit of one instance a minute makes the pool climb one
// step a minute.
func TestHPAStepLimitsCapChanges(t *testing.T) {
	pol := NewHPA(runningHPA(1))
	p := &pool{ready: 1, min: 1, max: 1000}
	var got []int
	for k := range 5 {
		got = append(got, p.decide(pol, k, 100, 1))
	}
	// 1 → max(1+4, 2) = 5 → max(5+4, 10) = 10 → 20 → 40 → 80: each
	// decision's period (15 s, exclusive) holds only its own event.
	if want := []int{5, 10, 20, 40, 80}; !equal(got, want) {
		t.Fatalf("default limits: %v, want %v", got, want)
	}

	h := runningHPA(1)
	h.ScaleUp.Policies = []HPAStep{{Type: StepPods, Value: 1, Period: 60e9}}
	pol = NewHPA(h)
	p = &pool{ready: 1, min: 1, max: 1000}
	got = got[:0]
	for k := range 9 {
		got = append(got, p.decide(pol, k, 100, 1))
	}
	if want := []int{2, 2, 2, 2, 3, 3, 3, 3, 4}; !equal(got, want) {
		t.Fatalf("one a minute: %v, want %v", got, want)
	}
}

// Scale-down percent limits round down, as Kubernetes' do; select min picks
// the policy allowing the smaller change.
func TestHPAScaleDownPercentAndSelect(t *testing.T) {
	zero := units.Duration(0)
	h := runningHPA(5)
	h.ScaleDown = HPARules{Stabilization: &zero, Select: SelectMin, Policies: []HPAStep{
		{Type: StepPercent, Value: 50, Period: 15e9}, {Type: StepPods, Value: 1, Period: 15e9}}}
	pol := NewHPA(h)
	p := &pool{ready: 10, min: 1}
	// Load for 1 instance: 50 % allows 10 → 5, 1 pod allows 10 → 9; min
	// picks 9.
	if c := p.decide(pol, 0, 5, 1); c != 9 {
		t.Fatalf("select min: %d, want 9", c)
	}
	h.ScaleDown.Select = SelectMax
	pol = NewHPA(h)
	p = &pool{ready: 9, min: 1}
	// The recommendation is 1; 50 % allows int(9 × 0.5) = 4, 1 pod allows
	// 8; max picks the larger change, 4.
	if c := p.decide(pol, 0, 5, 1); c != 4 {
		t.Fatalf("select max: %d, want 4", c)
	}
}

// Instances still provisioning count as reporting zero on a scale-up, so a
// scale-up under way is not repeated while they load.
func TestHPAUnreadyDoNotRepeatScaleUp(t *testing.T) {
	pol := NewHPA(runningHPA(5))
	// 4 ready at 10 running each want 8; 4 more are already coming.
	o := Observation{NowNs: 0, Ready: 4, Requested: 4, Running: 10}
	if got := pol.Desired(&o); got != 8 {
		t.Fatalf("got %d, want 8 (the scale-up under way)", got)
	}
	o = Observation{NowNs: 15e9, Ready: 4, Requested: 4, Running: 15}
	if got := pol.Desired(&o); got != 12 {
		t.Fatalf("got %d, want 12 = ceil(4 × 15 / 5)", got)
	}
}

// Out-of-bounds counts come back inside them first, as reconcileAutoscaler
// does, and a pool scaled to zero stays there.
func TestHPABoundsAndZero(t *testing.T) {
	pol := NewHPA(runningHPA(5))
	if got := pol.Desired(&Observation{Ready: 12, Running: 5, MaxInstances: 10}); got != 10 {
		t.Fatalf("above max: %d, want 10", got)
	}
	if got := pol.Desired(&Observation{Ready: 1, Running: 5, MinInstances: 3}); got != 3 {
		t.Fatalf("below min: %d, want 3", got)
	}
	if got := pol.Desired(&Observation{Running: 5}); got != 0 {
		t.Fatalf("at zero: %d, want 0", got)
	}
}

func TestHPAValidateNamesFields(t *testing.T) {
	neg := units.Duration(-1)
	bad := -0.5
	h := HPA{Metric: "cpu", Target: 0, Tolerance: &bad,
		ScaleUp:   HPARules{Policies: []HPAStep{{Type: "nodes", Value: 0, Period: 0}}},
		ScaleDown: HPARules{Stabilization: &neg, Select: "most"}}
	h.Defaults()
	err := h.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, field := range []string{"metric:", "target:", "tolerance:", "scale_up.policies[0].type:",
		"scale_up.policies[0].value:", "scale_up.policies[0].period:", "scale_down.stabilization:", "scale_down.select:"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not name %s:\n%v", field, err)
		}
	}
	kv := HPA{Metric: MetricKVUsage, Target: 80}
	kv.Defaults()
	if err := kv.Validate(); err == nil || !strings.HasPrefix(err.Error(), "target:") {
		t.Errorf("kv_usage target 80: %v", err)
	}
	ok := runningHPA(4)
	ok.Defaults()
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stabilizeNaive is stabilize as the controller states it: every
// recommendation of each window scanned.
func stabilizeNaive(recs []stamped, upNs, downNs, nowNs int64, cur, rec int) int {
	up, down := rec, rec
	for _, r := range recs {
		if r.atNs > nowNs-upNs {
			up = min(up, r.n)
		}
		if r.atNs > nowNs-downNs {
			down = max(down, r.n)
		}
	}
	return min(max(cur, up), down)
}

// stabilize keeps only the recommendations that may still be a window's
// lowest or highest, and answers as the scan over all of them does.
func TestHPAStabilizeMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		up, down := units.Duration(rng.Int64N(5)*1e9), units.Duration(rng.Int64N(20)*1e9)
		h := NewHPA(HPA{Metric: MetricRunning, Target: 1, ScaleUp: HPARules{Stabilization: &up},
			ScaleDown: HPARules{Stabilization: &down}}).(*hpa)
		var all []stamped
		nowNs := int64(0)
		for range 300 {
			nowNs += rng.Int64N(3e9)
			cur, rec := 1+rng.IntN(10), 1+rng.IntN(10)
			want := stabilizeNaive(all, int64(up), int64(down), nowNs, cur, rec)
			if got := h.stabilize(nowNs, cur, rec); got != want {
				t.Fatalf("windows %v/%v at %d ns: %d, the scan says %d", up, down, nowNs, got, want)
			}
			all = append(all, stamped{nowNs, rec})
		}
	}
}

// A decision costs the same however many decisions its windows hold: a
// pool deciding every millisecond under the default 300 s scale-down
// window took 16 s of a 328 s run rescanning each window (a scenario swarm
// case); 200,000 rising recommendations (the worst case: each one the
// window's lowest to come) must take well under a second.
func TestHPAStabilizeCostIsFlat(t *testing.T) {
	h := NewHPA(runningHPA(1)).(*hpa)
	up := units.Duration(300e9)
	h.upWindowNs = int64(up)
	start := time.Now()
	for k := range 200_000 {
		h.stabilize(int64(k)*1e6, 1, 1+k%1000)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("200,000 decisions took %v", d)
	}
}
