package workload

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"handoff/models/units"
	"handoff/sim"
)

const statN = 20000

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func synth(t testing.TB, s Synthetic, seed uint64) []sim.Request {
	t.Helper()
	src, err := NewSynthetic(s, newRNG(seed))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := drain(src, 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	return reqs
}

func poisson(rate float64) Arrival { return Arrival{Process: ProcessPoisson, Rate: units.Rate(rate)} }

func TestLengthMoments(t *testing.T) {
	// Tolerances are ≥ 3 standard errors for n = 20000 (stated per row).
	for _, tc := range []struct {
		name              string
		l                 Length
		mean, std         float64
		meanTol, stdTolFr float64 // absolute; fraction of std
	}{
		{"fixed", Length{Dist: DistFixed, Value: 128}, 128, 0, 0, 0},
		// Discrete uniform on 10..20: mean 15, variance (11²−1)/12 = 10.
		{"uniform", Length{Dist: DistUniform, Min: 10, Max: 20}, 15, math.Sqrt(10), 0.1, 0.02},
		// SE of the mean 200/√20000 = 1.4.
		{"normal", Length{Dist: DistNormal, Mean: 1000, Stddev: 200}, 1000, 200, 5, 0.03},
		// SE of the mean 300/√20000 = 2.1; the lognormal sd estimate is noisier.
		{"lognormal", Length{Dist: DistLognormal, Mean: 500, Stddev: 300}, 500, 300, 8, 0.06},
		// Values 100, 200, 400 with weights 1:2:1: mean 225, variance
		// (125² + 2·25² + 175²)/4 = 11875.
		{"empirical", Length{Dist: DistEmpirical, Values: []int{100, 200, 400}, Weights: []float64{1, 2, 1}},
			225, math.Sqrt(11875), 3, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := synth(t, Synthetic{Requests: statN, Arrival: poisson(10), InputTokens: tc.l,
				OutputTokens: Length{Dist: DistFixed, Value: 1}}, 1)
			xs := make([]float64, len(reqs))
			for i, r := range reqs {
				xs[i] = float64(r.PromptTokens)
			}
			mean, std := meanStd(xs)
			if math.Abs(mean-tc.mean) > tc.meanTol || math.Abs(std-tc.std) > tc.stdTolFr*tc.std {
				t.Errorf("mean %.2f std %.2f, want %.2f ± %.2f, %.2f ± %.0f%%", mean, std, tc.mean, tc.meanTol, tc.std, 100*tc.stdTolFr)
			}
		})
	}
}

func TestLengthClamp(t *testing.T) {
	// Normal(100, 200) clamped to [50, 120]: about 40% fall below 50, 46% above 120.
	reqs := synth(t, Synthetic{Requests: 2000, Arrival: poisson(10),
		InputTokens:  Length{Dist: DistNormal, Mean: 100, Stddev: 200, Min: 50, Max: 120},
		OutputTokens: Length{Dist: DistNormal, Mean: 1, Stddev: 50}}, 2)
	atMin, atMax := 0, 0
	for _, r := range reqs {
		if r.PromptTokens < 50 || r.PromptTokens > 120 {
			t.Fatalf("prompt %d outside [50, 120]", r.PromptTokens)
		}
		atMin += b2i(r.PromptTokens == 50)
		atMax += b2i(r.PromptTokens == 120)
	}
	if atMin < 600 || atMax < 700 {
		t.Errorf("%d at min, %d at max: clamping looks wrong", atMin, atMax)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestArrivalGaps(t *testing.T) {
	// Rate 20/s: mean gap 50 ms. Poisson: CV 1; gamma: CV as given;
	// constant: every gap 50 ms.
	for _, tc := range []struct {
		arrival       Arrival
		cv, meanTolFr float64
		stdTolFr      float64
	}{
		{Arrival{Process: ProcessPoisson, Rate: 20}, 1, 0.03, 0.04},
		{Arrival{Process: ProcessGamma, Rate: 20, CV: 2}, 2, 0.05, 0.08},
		{Arrival{Process: ProcessGamma, Rate: 20, CV: 0.5}, 0.5, 0.02, 0.04},
		{Arrival{Process: ProcessConstant, Rate: 20}, 0, 1e-9, 0},
	} {
		reqs := synth(t, Synthetic{Requests: statN, Arrival: tc.arrival,
			InputTokens: Length{Dist: DistFixed, Value: 1}, OutputTokens: Length{Dist: DistFixed, Value: 1}}, 3)
		gaps := make([]float64, len(reqs)-1)
		for i := range gaps {
			gaps[i] = float64(reqs[i+1].ArrivalNs - reqs[i].ArrivalNs)
		}
		mean, std := meanStd(gaps)
		const wantMean = 50e6
		if math.Abs(mean-wantMean) > tc.meanTolFr*wantMean+1 || math.Abs(std-tc.cv*wantMean) > tc.stdTolFr*tc.cv*wantMean+1 {
			t.Errorf("%+v: gap mean %.4g std %.4g, want %.4g and %.4g", tc.arrival, mean, std, wantMean, tc.cv*wantMean)
		}
	}
}

func TestSyntheticStops(t *testing.T) {
	fixed := Length{Dist: DistFixed, Value: 1}
	constant := Arrival{Process: ProcessConstant, Rate: 100}
	for _, tc := range []struct {
		name     string
		requests int
		duration units.Duration
		want     int
	}{
		{"requests", 250, 0, 250},
		{"duration", 0, units.Duration(10e9), 1000}, // arrivals 0, 10 ms, …, 9.99 s
		{"requests first", 250, units.Duration(10e9), 250},
		{"duration first", 5000, units.Duration(10e9), 1000},
	} {
		spec := Synthetic{Requests: tc.requests, Duration: tc.duration, Arrival: constant,
			InputTokens: fixed, OutputTokens: fixed}
		reqs := synth(t, spec, 4)
		if len(reqs) != tc.want {
			t.Errorf("%s: %d requests, want %d", tc.name, len(reqs), tc.want)
		}
		// The count a run may reserve records for: known only without a duration.
		src, err := NewSynthetic(spec, rand.New(rand.NewPCG(4, 4)))
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if tc.duration == 0 {
			want = tc.want
		}
		if got := src.(sim.Counted).MaxRequests(); got != want {
			t.Errorf("%s: MaxRequests %d, want %d", tc.name, got, want)
		}
	}
}

func TestSyntheticDeterminism(t *testing.T) {
	s := Synthetic{Requests: 500, Arrival: Arrival{Process: ProcessGamma, Rate: 5, CV: 3},
		InputTokens:  Length{Dist: DistLognormal, Mean: 800, Stddev: 900, Max: 4096},
		OutputTokens: Length{Dist: DistEmpirical, Values: []int{10, 100, 1000}}}
	a, b, c := synth(t, s, 7), synth(t, s, 7), synth(t, s, 8)
	same := func(x, y []sim.Request) bool {
		for i := range x {
			if !equalReq(x[i], y[i]) {
				return false
			}
		}
		return len(x) == len(y)
	}
	if !same(a, b) {
		t.Error("same seed, different sequences")
	}
	if same(a, c) {
		t.Error("different seeds, same sequence")
	}
}

func TestSyntheticValidate(t *testing.T) {
	ok := Synthetic{Requests: 10, Arrival: poisson(1),
		InputTokens: Length{Dist: DistFixed, Value: 1}, OutputTokens: Length{Dist: DistFixed, Value: 1}}
	for _, tc := range []struct {
		edit func(s *Synthetic)
		want string
	}{
		{func(s *Synthetic) { s.Requests = 0 }, "requests: set requests or duration"},
		{func(s *Synthetic) { s.Requests = -1 }, "requests: must be ≥ 0"},
		{func(s *Synthetic) { s.Arrival.Process = "bursty" }, `arrival.process: "bursty" is not one of`},
		{func(s *Synthetic) { s.Arrival.Rate = 0 }, "arrival.rate: must be > 0"},
		{func(s *Synthetic) { s.Arrival.Process = ProcessGamma }, "arrival.cv: must be in (0, 100]"},
		{func(s *Synthetic) { s.Arrival.CV = 2 }, "arrival.cv: applies only to process gamma"},
		{func(s *Synthetic) { s.InputTokens = Length{Dist: DistNormal, Mean: 10, Stddev: -1} }, "input_tokens.stddev: must be ≥ 0"},
		{func(s *Synthetic) { s.InputTokens = Length{Dist: DistNormal, Mean: 10, Min: 20, Max: 5} }, "input_tokens.max: must be 0 (unbounded) or in [max(1, min)"},
		{func(s *Synthetic) { s.InputTokens = Length{Dist: "zipf"} }, `input_tokens.dist: "zipf" is not one of`},
		{func(s *Synthetic) { s.OutputTokens = Length{Dist: DistFixed} }, "output_tokens.value: must be in [1,"},
		{func(s *Synthetic) { s.OutputTokens = Length{Dist: DistFixed, Value: 3, Mean: 2} }, "output_tokens.mean: not used by dist fixed"},
		{func(s *Synthetic) { s.OutputTokens = Length{Dist: DistUniform, Min: 0, Max: 3} }, "output_tokens.min: must be ≥ 1"},
		{func(s *Synthetic) {
			s.OutputTokens = Length{Dist: DistEmpirical, Values: []int{1, 2}, Weights: []float64{1}}
		}, "output_tokens.weights: has 1 entries, values has 2"},
		{func(s *Synthetic) {
			s.OutputTokens = Length{Dist: DistEmpirical, Values: []int{1, 0}, Weights: []float64{0, 0}}
		}, "output_tokens.values: [1] must be in [1,"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
		if _, err := NewSynthetic(s, newRNG(1)); err == nil {
			t.Errorf("NewSynthetic accepted an invalid spec (%s)", tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid spec rejected: %v", err)
	}
}

func BenchmarkSynthetic(b *testing.B) {
	src, err := NewSynthetic(Synthetic{Requests: math.MaxInt, Arrival: Arrival{Process: ProcessGamma, Rate: 50, CV: 2},
		InputTokens:  Length{Dist: DistLognormal, Mean: 1000, Stddev: 800},
		OutputTokens: Length{Dist: DistEmpirical, Values: []int{10, 50, 200, 800}, Weights: []float64{4, 3, 2, 1}}}, newRNG(1))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var r sim.Request
	for b.Loop() {
		if _, err := src.Next(&r); err != nil {
			b.Fatal(err)
		}
	}
}
