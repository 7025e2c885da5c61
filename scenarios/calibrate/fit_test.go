package calibrate

import (
	"math"
	"testing"

	"handoff/hardware"
)

// h100 is the catalog's h100-sxm and its link.
func h100(t testing.TB) Hardware {
	cat := hardware.Default()
	a, err := cat.Accelerator("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	l, err := cat.Link(a.ScaleUpLink)
	if err != nil {
		t.Fatal(err)
	}
	return Hardware{Accel: a, Link: l}
}

// synthetic simulates the scenarios at truth and returns them as
// measured experiments: the fit's "measurements" come from handoff itself.
func synthetic(t testing.TB, truth Hardware, scenarios ...string) []Experiment {
	var exps []Experiment
	for _, sc := range scenarios {
		model := map[string]string{"testdata/tiny-7b.yaml": "llama-2-7b", "testdata/tiny-8b.yaml": "llama-3.1-8b"}[sc]
		var stages []Stage
		for i, rate := range []float64{4, 8} {
			stages = append(stages, Stage{Experiment: sc, Model: model, TP: 1, Index: i, OutputLen: 40, Rate: rate, DurationS: 5})
		}
		exps = append(exps, Experiment{Scenario: sc, Stages: stages})
	}
	res, err := Run(exps, Options{Hardware: &truth})
	if err != nil {
		t.Fatal(err)
	}
	for i := range exps {
		for j, r := range res[i].Rows {
			s := &exps[i].Stages[j]
			s.NSuccess, s.TTFTMean, s.TTFTP99, s.E2EMean, s.E2EP99 = r.Completed, r.TTFTMean, r.TTFTP99, r.E2EMean, r.E2EP99
		}
	}
	return exps
}

// TestFitRecoversKnownFactors generates measurements at known MFU and MBU
// (prompts long enough that prefill is compute-bound and users that never
// return, so no prompt hits the prefix cache: TTFT sees MFU and
// decode sees MBU), starts the fit elsewhere, and checks it finds them.
func TestFitRecoversKnownFactors(t *testing.T) {
	truth := h100(t)
	truth.Accel.MFU, truth.Accel.MBU = 0.45, 0.7
	exps := synthetic(t, truth, "testdata/tiny-7b.yaml")
	ps, err := Lookup([]string{"mfu", "mbu"})
	if err != nil {
		t.Fatal(err)
	}
	start := h100(t)
	start.Accel.MFU, start.Accel.MBU = 0.65, 0.85
	f, err := Fit(Problem{Experiments: exps, Start: start, Params: ps, MaxEvals: 300})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.45, 0.7}
	for i, p := range ps {
		if got := f.Values[i]; math.Abs(got-want[i]) > 0.05*want[i] {
			t.Errorf("%s = %g, want %g ± 5%%", p.Name, got, want[i])
		}
	}
	if !(f.Objective < 1e-4 && f.Objective < f.StartObjective) {
		t.Errorf("objective %g (start %g), want < 1e-4", f.Objective, f.StartObjective)
	}
	again, err := Fit(Problem{Experiments: exps, Start: start, Params: ps, MaxEvals: 300})
	if err != nil || !equalFloats(again.Values, f.Values) {
		t.Errorf("refit gave %v (%v), want the same %v", again.Values, err, f.Values)
	}
}

// TestFitRecoversFrontEnd: measurements generated with a 4.5 ms front end;
// a fit of the front end alone, from its 3 ms start, finds it.
func TestFitRecoversFrontEnd(t *testing.T) {
	truth := h100(t)
	truth.Accel.Serving.FrontendNs = 4.5e6
	exps := synthetic(t, truth, "testdata/tiny-7b.yaml")
	ps, err := Lookup([]string{"frontend_latency"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Fit(Problem{Experiments: exps, Start: h100(t), Params: ps, MaxEvals: 200})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Values[0]; math.Abs(got-4.5e6) > 0.02*4.5e6 {
		t.Errorf("frontend_latency = %g ns, want 4.5 ms ± 2%% (objective %g)", got, f.Objective)
	}
}

func equalFloats(a, b []float64) bool {
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

// TestLeaveOneOutPredictsHeldOutModel: two models measured at the same
// known MBU; fitting either alone recovers it, so the held-out model is
// predicted within a small error by the same fit-then-run path.
func TestLeaveOneOutPredictsHeldOutModel(t *testing.T) {
	truth := h100(t)
	truth.Accel.MBU = 0.6
	exps := synthetic(t, truth, "testdata/tiny-7b.yaml", "testdata/tiny-8b.yaml")
	ps, _ := Lookup([]string{"mbu"})
	held, err := LeaveOneOut(Problem{Experiments: exps, Start: h100(t), Params: ps, MaxEvals: 40}, Models(exps))
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 || held[0].Model != "llama-2-7b" || held[1].Model != "llama-3.1-8b" {
		t.Fatalf("held out %+v", held)
	}
	for _, h := range held {
		if got := h.Fit.Values[0]; math.Abs(got-0.6) > 0.03 {
			t.Errorf("without %s: mbu %g, want 0.6", h.Model, got)
		}
		for _, tg := range Targets(Rows(h.Results))[:4] {
			if tg.N != 2 || tg.MAE > 0.10 {
				t.Errorf("%s held out: %s MAE %.3f over %d stages, want ≤ 10%% over 2", h.Model, tg.Metric, tg.MAE, tg.N)
			}
		}
	}
}

func TestOverloaded(t *testing.T) {
	for _, tc := range []struct {
		ok, fail int
		want     bool
	}{{100, 0, false}, {90, 10, false}, {89, 11, true}, {732, 4068, true}} {
		if got := (Stage{NSuccess: tc.ok, NFail: tc.fail}).Overloaded(); got != tc.want {
			t.Errorf("%d ok %d fail: overloaded %v, want %v", tc.ok, tc.fail, got, tc.want)
		}
	}
}

func BenchmarkCalibrateRun(b *testing.B) {
	exps, err := ReadMeasured("../calibration")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Run(exps, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeMFUStartsAtMFU: an unset decode_mfu means "the MFU", so a fit
// starts there, not at its lower bound.
func TestDecodeMFUStartsAtMFU(t *testing.T) {
	h := h100(t)
	h.Accel.Serving.DecodeMFU = 0
	ps, _ := Lookup([]string{"decode_mfu"})
	if got := ps[0].fromU(ps[0].toU(ps[0].Get(&h))); math.Abs(got-h.Accel.MFU) > 1e-9 {
		t.Errorf("decode_mfu starts at %g, want the MFU %g", got, h.Accel.MFU)
	}
}
