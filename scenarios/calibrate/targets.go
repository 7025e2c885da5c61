package calibrate

import "math"

// Target is one error figure of the report against its target.
type Target struct {
	Metric    string  // what is compared
	Stages    string  // "non-overloaded" or "overloaded"
	N         int     // stages it covers
	MAE       float64 // mean |(sim − measured)/measured|
	Signed    float64 // mean (sim − measured)/measured
	MAEMax    float64 // target for MAE
	SignedMax float64 // target for |Signed|; 0 = none
}

// Met reports whether the figure is within its targets (vacuously, with no stages).
func (t Target) Met() bool {
	return t.N == 0 || t.MAE <= t.MAEMax && (t.SignedMax == 0 || math.Abs(t.Signed) <= t.SignedMax)
}

// targetSpec is one row of the targets table: a metric, its stage class,
// its targets and how to read sim and measured from a row.
type targetSpec struct {
	metric            string
	overloaded        bool
	maeMax, signedMax float64
	pick              func(r Row) (sim, meas float64)
}

var targetSpecs = []targetSpec{
	{"TTFT mean", false, 0.10, 0.03, func(r Row) (float64, float64) { return r.TTFTMean, r.Stage.TTFTMean }},
	{"TTFT p99", false, 0.20, 0.03, func(r Row) (float64, float64) { return r.TTFTP99, r.Stage.TTFTP99 }},
	{"E2E mean", false, 0.05, 0.03, func(r Row) (float64, float64) { return r.E2EMean, r.Stage.E2EMean }},
	{"decode per token", false, 0.05, 0.03, func(r Row) (float64, float64) { return r.PerToken, r.Stage.PerToken() }},
	{"completed vs measured successes", true, 0.10, 0, func(r Row) (float64, float64) {
		return float64(r.Completed), float64(r.NSuccess)
	}},
	{"E2E mean of completed", true, 0.25, 0, func(r Row) (float64, float64) { return r.E2EMean, r.Stage.E2EMean }},
}

// Targets returns the report's error figures over rows: TTFT mean and p99,
// E2E mean and decode time per token over the non-overloaded stages
// (targets MAE 10%, 20%, 5%, 5%, signed within ±3%), and for the
// overloaded stages the completed count against the measured successes
// and the E2E mean of completed requests (MAE 10% and 25%).
func Targets(rows []Row) []Target {
	var out []Target
	for _, s := range targetSpecs {
		t := Target{Metric: s.metric, Stages: "non-overloaded", MAEMax: s.maeMax, SignedMax: s.signedMax}
		if s.overloaded {
			t.Stages = "overloaded"
		}
		var errs relErrors
		for _, r := range rows {
			if sim, meas := s.pick(r); r.Overloaded() == s.overloaded && meas > 0 {
				errs.add(sim, meas)
			}
		}
		t.N, t.MAE, t.Signed = errs.mean()
		out = append(out, t)
	}
	return out
}

// Rows flattens results into their stages, in order.
func Rows(results []Result) []Row {
	var out []Row
	for _, r := range results {
		out = append(out, r.Rows...)
	}
	return out
}
