package perf

import (
	"math"
	"testing"

	"handoff/hardware"
	"handoff/models/parallel"
)

// The public figures wse-3 is fitted to and checked against (sources in
// hardware/catalog.yaml). Decode rates are per user, one request at a time;
// the context is Artificial Analysis's 1k-input workload (1,000 prompt
// tokens, up to 1,000 output: 1,500 on average), which moves a wafer step by
// well under 1 µs.
const (
	publicDecodeContext = 1500
	publicPromptTokens  = 1000 // the 405B time to first token's prompt: ASSUMED
	wafers405B          = 19   // the fewest wse-3 that hold 810 GB: ASSUMED
)

// catalogWafer builds the wafer model of the catalog's wse-3 for model on
// wafers wafers, with edit (may be nil) applied to the configuration.
func catalogWafer(t testing.TB, model string, wafers int, edit func(*WaferConfig)) *Wafer {
	t.Helper()
	c := hardware.Default()
	d, err := c.Accelerator("wse-3")
	if err != nil {
		t.Fatal(err)
	}
	link, err := c.Link(d.Wafer.PipelineLink)
	if err != nil {
		t.Fatal(err)
	}
	cfg := WaferConfig{Model: catalogModel(t, model), Device: d, Wafers: wafers, Link: link, StepOverheadNs: -1}
	if edit != nil {
		edit(&cfg)
	}
	x, err := NewWafer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// decodeRate is the per-user decode rate, tokens/s, of one request alone.
func decodeRate(x *Wafer) float64 {
	return 1e9 / x.stepNs(&Batch{DecodeSeqs: 1, DecodeContext: publicDecodeContext})
}

// ttftSeconds is one prompt's prefill step on an idle wafer pipeline.
func ttftSeconds(x *Wafer) float64 {
	const p = publicPromptTokens
	return x.stepNs(&Batch{PrefillSeqs: 1, PrefillTokens: p, PrefillAttn: p * (p + 1) / 2}) / 1e9
}

// TestWaferPublicFigures pins the catalog's wse-3 against each public figure
// within its stated residual (model/figure − 1). The 8B and 70B rates
// (Cerebras' launch release, Aug 2024) fit layer_latency and width_latency,
// the 405B time to first token fits prefill_efficiency; the 405B rate (Nov
// 2024, a later release with speculative decoding) is a prediction the
// model misses by 83%, and the test says so rather than hiding it.
func TestWaferPublicFigures(t *testing.T) {
	tests := []struct {
		figure   string
		model    string
		wafers   int
		public   float64
		ttft     bool    // public is a time to first token (s), not a decode rate (tokens/s)
		residual float64 // the model's stated miss
	}{
		{"8B decode, fitted", "llama-3.1-8b", 1, 1800, false, +0.0006},
		{"70B decode, fitted", "llama-3.1-70b", 4, 450, false, +0.0007},
		{"405B decode, predicted", "llama-3.1-405b", wafers405B, 969, false, -0.834},
		{"405B TTFT, fitted", "llama-3.1-405b", wafers405B, 0.24, true, +0.008},
	}
	for _, tc := range tests {
		x := catalogWafer(t, tc.model, tc.wafers, nil)
		got := decodeRate(x)
		if tc.ttft {
			got = ttftSeconds(x)
		}
		if r := got/tc.public - 1; math.Abs(r-tc.residual) > 0.005 {
			t.Errorf("%s: model %.4g against %g: residual %+.1f%%, stated %+.1f%%",
				tc.figure, got, tc.public, 100*r, 100*tc.residual)
		}
	}
}

// linearFit returns base, da and db with stepNs = base + da·a + db·b for
// the layer latency a and width latency b (ns): the model is linear in
// both, so three evaluations determine it.
func linearFit(t *testing.T, model string, wafers int) (base, da, db float64) {
	at := func(a, b int64) float64 {
		return 1e9 / decodeRate(catalogWafer(t, model, wafers, func(c *WaferConfig) {
			c.LayerLatencyNs, c.WidthLatencyNs = a, b
		}))
	}
	t0 := at(1000, 1000)
	da, db = (at(2000, 1000)-t0)/1000, (at(1000, 2000)-t0)/1000
	return t0 - 1000*da - 1000*db, da, db
}

// solveLatencies returns the layer and width latencies (ns) that give the
// two decode rates exactly.
func solveLatencies(t *testing.T, m1 string, w1 int, rate1 float64, m2 string, w2 int, rate2 float64) (a, b float64) {
	c1, a1, b1 := linearFit(t, m1, w1)
	c2, a2, b2 := linearFit(t, m2, w2)
	y1, y2 := 1e9/rate1-c1, 1e9/rate2-c2
	det := a1*b2 - a2*b1
	return (y1*b2 - y2*b1) / det, (a1*y2 - a2*y1) / det
}

// TestWaferFit re-derives the catalog's fitted wse-3 figures from the
// public ones: layer_latency and width_latency from the launch release's
// 8B (1 wafer) and 70B (4 wafers) rates, solved exactly (two parameters,
// two figures), and prefill_efficiency from the 405B time to first token.
// The catalog rounds them (to 10 ns and 0.05).
func TestWaferFit(t *testing.T) {
	a, b := solveLatencies(t, "llama-3.1-8b", 1, 1800, "llama-3.1-70b", 4, 450)
	d, err := hardware.Default().Accelerator("wse-3")
	if err != nil {
		t.Fatal(err)
	}
	w := d.Wafer
	if math.Abs(a-float64(w.LayerLatencyNs)) > 10 || math.Abs(b-float64(w.WidthLatencyNs)) > 10 {
		t.Errorf("fit: layer_latency %.0f ns, width_latency %.0f ns; catalog %d and %d", a, b,
			w.LayerLatencyNs, w.WidthLatencyNs)
	}
	// ttft = rest + compute/PE: two evaluations determine rest and compute.
	ttftAt := func(pe float64) float64 {
		return ttftSeconds(catalogWafer(t, "llama-3.1-405b", wafers405B, func(c *WaferConfig) {
			c.PrefillEfficiency = pe
		}))
	}
	compute := ttftAt(0.5) - ttftAt(1)
	pe := compute / (0.24 - (ttftAt(1) - compute))
	if math.Abs(pe-w.PrefillEfficiency) > 0.025 {
		t.Errorf("fit: prefill_efficiency %.3f, catalog %g", pe, w.PrefillEfficiency)
	}
	t.Logf("fit: layer_latency %.0f ns, width_latency %.0f ns per 1,000 hidden, prefill_efficiency %.3f", a, b, pe)
}

// TestWaferLateRelease checks the override the catalog gives to mimic
// Cerebras' Oct/Nov 2024 release (with speculative decoding, which this
// per-token model does not represent): layer_latency 4.28 µs and
// width_latency 137 ns, solved from 70B at ~2,100 tokens/s on 4 wafers and
// 405B at 969 on 19.
func TestWaferLateRelease(t *testing.T) {
	a, b := solveLatencies(t, "llama-3.1-70b", 4, 2100, "llama-3.1-405b", wafers405B, 969)
	if math.Abs(a-4280) > 10 || math.Abs(b-137) > 1 {
		t.Errorf("late release fit: layer_latency %.0f ns, width_latency %.1f ns; catalog text 4280 and 137", a, b)
	}
	late := func(c *WaferConfig) { c.LayerLatencyNs, c.WidthLatencyNs = 4280, 137 }
	for _, tc := range []struct {
		model  string
		wafers int
		public float64
	}{{"llama-3.1-70b", 4, 2100}, {"llama-3.1-405b", wafers405B, 969}} {
		if got := decodeRate(catalogWafer(t, tc.model, tc.wafers, late)); math.Abs(got/tc.public-1) > 0.005 {
			t.Errorf("%s with the late-release override: %.0f tokens/s, want %g", tc.model, got, tc.public)
		}
	}
}

// TestWaferPrefillAgainstH100: with prefill_efficiency fitted to the 405B
// time to first token, a 4-wafer Llama-3.1-70B prefills an 8,192-token
// prompt in 0.36 s against 0.40 s on an H100 TP8 node (the h100-sxm
// roofline at its fitted factors, its long prompts' all-reduces at NCCL's
// fitted share of NVLink; Splitwise measured 0.85 s): 1.1x faster, not
// the 4.6x the 125 PF figure made it.
func TestWaferPrefillAgainstH100(t *testing.T) {
	const p = 8192
	prompt := Batch{PrefillSeqs: 1, PrefillTokens: p, PrefillAttn: p * (p + 1) / 2}
	wafer := catalogWafer(t, "llama-3.1-70b", 4, nil).stepNs(&prompt)
	h100, nvlink := catalogDevice(t, "h100-sxm")
	node, err := NewRoofline(RooflineConfig{Model: catalogModel(t, "llama-3.1-70b"), Device: h100, Layout: parallel.Tensor(8),
		ScaleUp: nvlink, StepOverheadNs: -1})
	if err != nil {
		t.Fatal(err)
	}
	gpu := node.stepNs(&prompt)
	if r := wafer / gpu; math.Abs(r-0.90) > 0.03 {
		t.Errorf("70B 8k prefill: 4 wafers %.0f ms, H100 TP8 %.0f ms: ratio %.2f, stated 0.90", wafer/1e6, gpu/1e6, r)
	}
}
