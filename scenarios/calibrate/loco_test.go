package calibrate

import (
	"math"
	"testing"
)

// syntheticPD returns the shipped H100 P/D configurations named, at their
// two lowest concurrencies, with their "measurements" simulated at truth.
func syntheticPD(t testing.TB, truth Hardware, configs ...string) []PDConfig {
	all, err := ReadPD("../calibration")
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []PDConfig
	for _, name := range configs {
		for _, c := range all {
			if c.Config == name {
				c.Runs = c.Runs[:2]
				cfgs = append(cfgs, c)
			}
		}
	}
	res, err := RunPD(cfgs, Options{Hardware: &truth})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		for j, r := range res[i].Rows {
			m := &cfgs[i].Runs[j]
			m.TTFTMean, m.TTFTMedian, m.TTFTP99 = r.TTFTMean, r.TTFTMedian, r.TTFTP99
			m.TPOTMean, m.TPOTMedian, m.ITLMean, m.OutputTPS = r.TPOTMean, r.TPOTMedian, r.ITLMean, r.OutputTPS
		}
	}
	return cfgs
}

// TestFitRecoversWeightOnlyMoE: the P/D stage's two MoE efficiencies are
// identifiable from P/D runs of gpt-oss-120b — decode reads a few experts
// a step (bandwidth), a 5,000-token prefill multiplies all of them
// (compute) — so a fit started elsewhere finds the values the runs were
// made at, and a configuration left out is predicted from the others.
func TestFitRecoversWeightOnlyMoE(t *testing.T) {
	if testing.Short() {
		t.Skip("fits to simulated P/D runs: about ten seconds")
	}
	truth := h100(t)
	truth.Accel.Serving.WeightOnlyMoEMBU, truth.Accel.Serving.WeightOnlyMoEMFU = 0.45, 0.3
	cfgs := syntheticPD(t, truth, "h100-p1tp2-d1tp2", "h100-p1tp4-d1tp4")
	ps, err := Lookup([]string{"weight_only_moe_mbu", "weight_only_moe_mfu"})
	if err != nil {
		t.Fatal(err)
	}
	p := Problem{PD: cfgs, Start: h100(t), Params: ps, MaxEvals: 120}
	f, err := Fit(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.45, 0.3} {
		if got := f.Values[i]; math.Abs(got-want) > 0.05*want {
			t.Errorf("%s = %g, want %g ± 5%%", ps[i].Name, got, want)
		}
	}
	p.Start = f.Hardware
	held, err := LeaveOneConfigOut(p, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 {
		t.Fatalf("%d held-out configurations, want 2", len(held))
	}
	for _, h := range held {
		for _, tg := range PDTargets(PDRows(h.Result)) {
			if tg.Metric == "TPOT mean" && tg.MAE > 0.02 {
				t.Errorf("%s held out: TPOT off by %.1f%%, want within 2%%", h.Config, 100*tg.MAE)
			}
		}
	}
}
