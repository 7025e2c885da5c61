package autoscale

import (
	"math"
	"strings"
	"testing"
)

// fakeCapacity is an instance with round figures: 10,000 prompt tokens/s
// whatever the target, decode throughput in proportion to the TPOT target
// (5,000 tokens/s at 50 ms), a prompt prefilled at 100 µs a token, a
// decode step of 20 ms.
type fakeCapacity struct{}

func (fakeCapacity) PrefillTokensPerSec(isl float64, ttftNs int64) float64 { return 10000 }
func (fakeCapacity) DecodeTokensPerSec(isl, osl float64, tpotNs int64) float64 {
	return float64(tpotNs) / 1e6 * 100
}
func (fakeCapacity) PrefillNs(isl float64) int64                { return int64(isl * 1e5) }
func (fakeCapacity) DecodeStepNs(isl, osl, batch float64) int64 { return 20e6 }

const (
	slaIntervalNs = 60e9
	ttftTarget    = 1e9
	tpotTarget    = 50e6
)

// steady is an interval of 10 req/s with 2,500-token prompts and
// 1,700-token outputs whose latencies are what the capacity expects.
func steady(k int) Observation {
	return Observation{NowNs: int64(k) * slaIntervalNs, IntervalNs: slaIntervalNs, Ready: 3,
		Requests: 600, MeanInput: 2500, MeanOutput: 1700, FinishedCount: 600, Running: 8,
		MeanTTFTNs: 250e6, MeanTPOTNs: 20e6}
}

func newSLA(t *testing.T, c SLA, role string) Policy {
	t.Helper()
	p, err := NewSLA(c, role, fakeCapacity{}, ttftTarget, tpotTarget)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Constant load gives ⌈load/capacity⌉ per role: prefill 25,000 tokens/s
// over 10,000 → 3; decode 17,000 over 5,000 → 4; colocated the larger.
func TestSLAConstantLoad(t *testing.T) {
	for _, tc := range []struct {
		role string
		want int
	}{{RolePrefill, 3}, {RoleDecode, 4}, {RoleColocated, 4}} {
		for _, pred := range []string{PredictConstant, PredictKalman} {
			p := newSLA(t, SLA{Predictor: pred}, tc.role)
			for k := range 20 {
				o := steady(k)
				if got := p.Desired(&o); got != tc.want {
					t.Fatalf("%s, %s predictor, interval %d: %d instances, want %d", tc.role, pred, k, got, tc.want)
				}
			}
		}
	}
}

// The Kalman predictor follows a ramp: after a warm-up its forecast of the
// next interval is within a tenth of the slope, where the constant
// predictor lags by the whole slope.
func TestSLAKalmanFollowsRamp(t *testing.T) {
	var k SLA
	k.Defaults()
	kal, con := newKalman(k.Kalman), &constant{}
	const slope = 5.0
	for i := 1; i <= 40; i++ {
		v := slope * float64(i)
		kal.observe(v)
		con.observe(v)
		next := v + slope
		if i >= 30 {
			if e := math.Abs(kal.next() - next); e > slope/10 {
				t.Fatalf("step %d: kalman forecast %.2f, next %.0f", i, kal.next(), next)
			}
			if e := math.Abs(con.next() - next); e != slope {
				t.Fatalf("step %d: constant forecast %.2f, next %.0f", i, con.next(), next)
			}
		}
	}

	// Through the planner: a prefill pool on a ramp of +1 req/s per
	// interval is sized for the coming interval, not the last.
	p := newSLA(t, SLA{Predictor: PredictKalman}, RolePrefill)
	for i := 1; i <= 40; i++ {
		o := steady(i)
		o.Requests = 60 * i // i req/s
		got := p.Desired(&o)
		if i >= 30 {
			// Sized for i+1 req/s give or take the forecast's error of
			// a tenth; the constant predictor would size for i.
			lo, hi := int(math.Ceil((float64(i)+0.9)*0.25)), int(math.Ceil((float64(i)+1.1)*0.25))
			if got < lo || got > hi {
				t.Fatalf("interval %d: %d instances, want %d..%d for %d req/s", i, got, lo, hi, i+1)
			}
		}
	}
}

// The correction factors: a TPOT above the expected step time tightens the
// decode target (d = 2: 25 ms, 2,500 tokens/s → ⌈17,000/2,500⌉ = 7); a
// TTFT above the expected raises the prefill count only when the cap lets
// it (Dynamo caps the factor at 1); a TTFT below it lowers the count.
func TestSLACorrectionFactors(t *testing.T) {
	slow := func(k int, ttft, tpot float64) Observation {
		o := steady(k)
		o.MeanTTFTNs, o.MeanTPOTNs = ttft, tpot
		return o
	}
	check := func(name string, c SLA, role string, o Observation, want int) {
		t.Helper()
		p := newSLA(t, c, role)
		if got := p.Desired(&o); got != want {
			t.Errorf("%s: %d instances, want %d", name, got, want)
		}
	}
	check("decode, TPOT 2× expected", SLA{}, RoleDecode, slow(0, 250e6, 40e6), 7)
	check("prefill, TTFT 3× expected, default cap", SLA{}, RolePrefill, slow(0, 750e6, 20e6), 3)
	four := 4.0
	check("prefill, TTFT 3× expected, cap 4", SLA{PrefillCorrectionMax: &four}, RolePrefill, slow(0, 750e6, 20e6), 8)
	check("prefill, TTFT ½ expected", SLA{}, RolePrefill, slow(0, 125e6, 20e6), 2)
	off := false
	check("decode, corrections off", SLA{Correction: &off}, RoleDecode, slow(0, 250e6, 40e6), 4)
}

// An interval without traffic keeps the count (Dynamo skips an adjustment
// whose metrics are NaN); a decode pool also needs finished requests.
func TestSLAIdleKeepsCount(t *testing.T) {
	p := newSLA(t, SLA{}, RoleDecode)
	o := steady(0)
	if got := p.Desired(&o); got != 4 {
		t.Fatalf("steady: %d", got)
	}
	idle := Observation{NowNs: slaIntervalNs, IntervalNs: slaIntervalNs, Ready: 4}
	if got := p.Desired(&idle); got != 4 {
		t.Fatalf("idle: %d instances, want the current 4", got)
	}
	unfinished := steady(2)
	unfinished.Ready, unfinished.FinishedCount, unfinished.MeanOutput = 6, 0, 0
	if got := p.Desired(&unfinished); got != 6 {
		t.Fatalf("nothing finished: %d instances, want the current 6", got)
	}
}

func TestSLAValidateNamesFields(t *testing.T) {
	zero := 0.0
	c := SLA{Predictor: "arima", Kalman: Kalman{R: -1, MinPoints: -2}, PrefillCorrectionMax: &zero}
	c.Defaults()
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, f := range []string{"predictor:", "kalman.r:", "kalman.min_points:", "prefill_correction_max:"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error does not name %s:\n%v", f, err)
		}
	}
	if _, err := NewSLA(SLA{}, "router", fakeCapacity{}, 1, 1); err == nil {
		t.Error("role router accepted")
	}
	if _, err := NewSLA(SLA{}, RoleDecode, fakeCapacity{}, 1e9, 0); err == nil {
		t.Error("TPOT target 0 accepted")
	}
}
