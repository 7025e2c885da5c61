package perf

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

// llama31_8B is Llama-3.1-8B as the hand computations below assume:
// 8.03e9 params in BF16 → 16.06e9 weight bytes and 16.06e9 FLOPs per token;
// KV per token 2·32 layers·8 kv heads·128·2 B = 131,072 B;
// attention 4·32 layers·32 heads·128 = 524,288 FLOPs per query·key pair.
func llama31_8B() *llm.Model {
	return &llm.Model{
		Name: "llama-3.1-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 128256, ParamsTotal: 8.03e9, ParamsActive: 8.03e9,
		Attention: llm.AttentionGQA, WeightBytes: 2, KVBytes: 2, MaxContext: 131072,
	}
}

// testH100 is an H100 SXM with round efficiency factors: peak 989.5 TFLOP/s
// BF16, 3.35 TB/s; with MFU 0.5 and MBU 0.8 the effective rates are
// 494.75 TFLOP/s and 2.68 TB/s. Overhead 2 ms.
func testH100() hardware.Accelerator {
	return hardware.Accelerator{
		Name: "test-h100", Kind: hardware.KindGPU, MemoryBytes: 80e9, MemoryBandwidthBps: 3.35e12,
		BF16FLOPS: 989.5e12, FP8FLOPS: 1979e12, MFU: 0.5, MBU: 0.8, StepOverheadNs: 2e6,
	}
}

// testLink is NVLink4-like: 450 GB/s per direction, 1 µs latency.
var testLink = hardware.Link{Name: "test-nvlink", BandwidthBps: 450e9, LatencyNs: 1000}

func mustRoofline(t testing.TB, cfg RooflineConfig) *Roofline {
	t.Helper()
	r, err := NewRoofline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRooflineServingTerms prices each serving term of the roofline by hand
// on Llama-3.1-8B at TP 1 (32 layers): a per-sequence and a per-token CPU
// cost, a decode MFU of its own, and the per-layer floors of pure-decode and
// mixed steps.
func TestRooflineServingTerms(t *testing.T) {
	dev := testH100()
	dev.Serving = hardware.Serving{DecodeMFU: 0.1, StepPerSeqNs: 20_000, StepPerTokenNs: 500,
		LayerFloorNs: 250_000, LayerFloorMixedNs: 300_000}
	r := mustRoofline(t, RooflineConfig{Model: llama31_8B(), Device: dev, Layout: parallel.Tensor(1), StepOverheadNs: -1})
	tests := []struct {
		name   string
		b      Batch
		wantNs float64
	}{{
		// Memory-bound (6.04 ms) over the 32·250 µs = 8 ms pure-decode
		// floor, which binds; + 20 µs + 0.5 µs CPU + 2 ms overhead.
		name: "decode floor binds", b: Batch{DecodeSeqs: 1, DecodeContext: 1000},
		wantNs: 8e6 + 20_000 + 500 + 2e6,
	}, {
		// 256 decodes at context 1000: FLOPs 256·16.06e9 + 524,288·256,000
		// = 4,245,577,728,000 at 989.5e12·0.1 = 42.906 ms, over the memory
		// term (16.06e9 + 131,072·256,256 B = 49.65e9 B → 18.53 ms) and the
		// floor; CPU 256·20 µs + 256·0.5 µs.
		name: "decode mfu", b: Batch{DecodeSeqs: 256, DecodeContext: 256_000},
		wantNs: 4_245_577_728_000/(989.5e12*0.1)*1e9 + 256*20_000 + 256*500 + 2e6,
	}, {
		// A one-token prompt chunk is a mixed step: the 9.6 ms mixed floor
		// binds; CPU 1 sequence, 1 token.
		name: "mixed floor binds", b: Batch{PrefillSeqs: 1, PrefillTokens: 1, PrefillTokensSq: 1, PrefillAttn: 1},
		wantNs: 32*300_000 + 20_000 + 500 + 2e6,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.StepNs(&tc.b); math.Abs(float64(got)-tc.wantNs) > 1 {
				t.Errorf("StepNs = %d, want %.0f", got, tc.wantNs)
			}
		})
	}
}

// TestRooflineAllReduceBandwidth: an all-reduce reaching a quarter of the
// link's bandwidth takes four times as long to move its bytes; its hops'
// latency is unchanged (TestRooflineHandComputed's TP 2 decode).
func TestRooflineAllReduceBandwidth(t *testing.T) {
	dev := testH100()
	dev.Serving.AllReduceBW = 0.25
	r := mustRoofline(t, RooflineConfig{Model: llama31_8B(), Device: dev, Layout: parallel.Tensor(2), ScaleUp: testLink, StepOverheadNs: -1})
	want := 16_191_203_072/2/2.68e12*1e9 + 4*64*8192/450e9*1e9 + 128_000 + 2e6
	if got := r.StepNs(&Batch{DecodeSeqs: 1, DecodeContext: 1000}); math.Abs(float64(got)-want) > 1 {
		t.Errorf("StepNs = %d, want %.0f", got, want)
	}
}

func TestRooflineHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		tp     int
		b      Batch
		wantNs float64
	}{{
		// Single-sequence decode at context 1000, memory-bound:
		// bytes = 16.06e9 + 131,072·(1000 read + 1 written) = 16,191,203,072 B
		// → / 2.68e12 B/s = 6.041494 ms; FLOPs (16.58e9 → 0.034 ms) are hidden.
		// + 2 ms overhead = 8.041494 ms.
		name: "decode 1 seq ctx 1000", tp: 1,
		b:      Batch{DecodeSeqs: 1, DecodeContext: 1000},
		wantNs: 16_191_203_072/2.68e12*1e9 + 2e6,
	}, {
		// Prefill of one 2048-token prompt from scratch, compute-bound:
		// pairs = 2048·(0 + 2049/2) = 2,098,176;
		// FLOPs = 2048·16.06e9 + 524,288·2,098,176 = 33,990,928,498,688
		// → / 494.75e12 = 68.703241 ms (bytes 16.33e9 → 6.09 ms, hidden).
		// + 2 ms = 70.703241 ms.
		name: "prefill 2048 from scratch", tp: 1,
		b:      Batch{PrefillSeqs: 1, PrefillTokens: 2048, PrefillTokensSq: 2048 * 2048, PrefillAttn: 2_098_176},
		wantNs: 33_990_928_498_688/494.75e12*1e9 + 2e6,
	}, {
		// The same decode at TP 2: bytes per rank halve (8.095601536e9 B →
		// 3.020747 ms); all-reduce: 2·32 layers·(2·1/2·4096·2 B)/450e9 B/s
		// = 1165.08 ns for the one token, + 64 all-reduces · 2(TP−1) = 2
		// ring steps · 1 µs latency = 129,165.08 ns. + 2 ms = 5.149912 ms.
		name: "decode 1 seq ctx 1000 tp2", tp: 2,
		b:      Batch{DecodeSeqs: 1, DecodeContext: 1000},
		wantNs: 16_191_203_072/2/2.68e12*1e9 + 64*8192/450e9*1e9 + 128_000 + 2e6,
	}, {
		name: "empty batch", tp: 1, b: Batch{}, wantNs: 0,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRoofline(t, RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(tc.tp),
				ScaleUp: testLink, StepOverheadNs: -1})
			got := r.StepNs(&tc.b)
			if math.Abs(float64(got)-tc.wantNs) > 1 {
				t.Errorf("StepNs = %d, want %.0f", got, tc.wantNs)
			}
		})
	}
}

// TestRooflineMoETouchedExperts checks the expected-distinct-experts term:
// with top-2 of 8 experts, one token touches 1−(6/8)^1 = 1/4 of the expert
// bytes, three tokens 1−(3/4)^3 = 37/64.
func TestRooflineMoETouchedExperts(t *testing.T) {
	m := &llm.Model{Name: "moe", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 32000, ParamsTotal: 46.7e9, ParamsActive: 12.9e9,
		Experts: 8, ExpertsPerTok: 2, Attention: llm.AttentionGQA, WeightBytes: 2, KVBytes: 2}
	r := mustRoofline(t, RooflineConfig{Model: m, Device: testH100(), Layout: parallel.Tensor(1), StepOverheadNs: -1})
	shared, expert := m.SharedParams()*2, m.ExpertParams()*2
	for _, tc := range []struct {
		n    int
		frac float64
	}{{1, 0.25}, {3, 37.0 / 64}, {1000, 1}} {
		got := r.denseBytesRank + r.routed.touched(tc.n)*r.routed.bytesEach
		want := shared + tc.frac*expert
		if math.Abs(got-want) > 1e-6*want {
			t.Errorf("n=%d: weight bytes %g, want %g", tc.n, got, want)
		}
	}
}

func TestRooflineDefaultsAndFP8(t *testing.T) {
	m := llama31_8B()
	b := Batch{PrefillSeqs: 1, PrefillTokens: 2048, PrefillAttn: 2_098_176}
	def := mustRoofline(t, RooflineConfig{Model: m, Device: testH100(), Layout: parallel.Tensor(1), StepOverheadNs: -1})
	explicit := mustRoofline(t, RooflineConfig{Model: m, Device: testH100(), Layout: parallel.Tensor(1), MFU: 0.5, MBU: 0.8, StepOverheadNs: 2e6})
	if def.StepNs(&b) != explicit.StepNs(&b) {
		t.Errorf("device defaults %d != explicit %d", def.StepNs(&b), explicit.StepNs(&b))
	}
	zero := mustRoofline(t, RooflineConfig{Model: m, Device: testH100(), Layout: parallel.Tensor(1), StepOverheadNs: 0})
	if d := def.StepNs(&b) - zero.StepNs(&b); d != 2e6 {
		t.Errorf("overhead 0 vs default differ by %d ns, want 2e6", d)
	}
	// FP8 weights and activations double the peak: 33,990,928,498,688 /
	// 989.5e12 = 34.351621 ms.
	fp8 := mustRoofline(t, RooflineConfig{Model: m.WithPrecision(llm.FP8, "", ""), Device: testH100(),
		Layout: parallel.Tensor(1), StepOverheadNs: 0, Compute: "fp8"})
	if got, want := float64(fp8.StepNs(&b)), 33_990_928_498_688/989.5e12*1e9; math.Abs(got-want) > 1 {
		t.Errorf("fp8 prefill %g ns, want %g", got, want)
	}
	// FP8 weights with BF16 activations (W8A16) run at the BF16 peak.
	w8a16 := mustRoofline(t, RooflineConfig{Model: m.WithPrecision(llm.FP8, "", ""), Device: testH100(),
		Layout: parallel.Tensor(1), StepOverheadNs: 0})
	if got := w8a16.StepNs(&b); got != zero.StepNs(&b) {
		t.Errorf("w8a16 prefill %d ns, want the bf16 %d", got, zero.StepNs(&b))
	}
}

// TestFP8WeightsHalveMemoryBoundDecode: a decode step of one short
// sequence reads the weights; stored in FP8 they are half the bytes, so
// the memory-bound step (less its overhead) takes half as long.
func TestFP8WeightsHalveMemoryBoundDecode(t *testing.T) {
	m := llama31_8B()
	b := Batch{DecodeSeqs: 1, DecodeContext: 1}
	cfg := RooflineConfig{Model: m, Device: testH100(), Layout: parallel.Tensor(1), StepOverheadNs: 0}
	bf16 := mustRoofline(t, cfg).stepNs(&b)
	cfg.Model, cfg.Compute = m.WithPrecision(llm.FP8, "", ""), "fp8"
	fp8 := mustRoofline(t, cfg).stepNs(&b)
	kv := 2 * m.KVBytesPerToken() / (3.35e12 * 0.8) * 1e9 // one token read, one written
	if got, want := fp8-kv, (bf16-kv)/2; math.Abs(got-want) > 1e-6*want {
		t.Errorf("fp8 weights: %.1f ns besides KV, want half of bf16's, %.1f", got, want)
	}
}

func TestRooflineConfigErrors(t *testing.T) {
	noFP8 := testH100()
	noFP8.FP8FLOPS = 0
	tests := []struct {
		name string
		cfg  RooflineConfig
		want string
	}{
		{"nil model", RooflineConfig{Device: testH100(), Layout: parallel.Tensor(1)}, "model is nil"},
		{"tp 0", RooflineConfig{Model: llama31_8B(), Device: testH100()}, "tp 0"},
		{"mfu", RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(1), MFU: 1.5}, "mfu 1.5"},
		{"mbu", RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(1), MBU: -1}, "mbu -1"},
		{"overhead", RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(1), StepOverheadNs: -5}, "overhead -5"},
		{"fp8", RooflineConfig{Model: llama31_8B(), Device: noFP8, Layout: parallel.Tensor(1), Compute: "fp8"}, "fp8 peak"},
		{"link", RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(4)}, "scale-up link"},
	}
	for _, tc := range tests {
		_, err := NewRoofline(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestRooflineMonotone checks that more work never takes less time.
func TestRooflineMonotone(t *testing.T) {
	r := mustRoofline(t, RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(2), ScaleUp: testLink, StepOverheadNs: -1})
	prev := int64(0)
	for seqs := 1; seqs <= 256; seqs *= 2 {
		b := Batch{DecodeSeqs: seqs, DecodeContext: int64(seqs) * 4000}
		if got := r.StepNs(&b); got < prev {
			t.Fatalf("decode %d seqs: %d ns < %d ns for half the batch", seqs, got, prev)
		} else {
			prev = got
		}
	}
}

func BenchmarkRooflineStep(b *testing.B) {
	r := mustRoofline(b, RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(2), ScaleUp: testLink, StepOverheadNs: -1})
	batch := Batch{PrefillSeqs: 1, PrefillTokens: 512, PrefillAttn: 512 * 1000, PrefillCtxRead: 744,
		DecodeSeqs: 63, DecodeContext: 63 * 1500}
	b.ReportAllocs()
	var sink int64
	for b.Loop() {
		sink += r.StepNs(&batch)
	}
	if sink == 0 {
		b.Fatal("zero step time")
	}
}

// BenchmarkRooflineStepMoE prices gpt-oss-120b steps at TP 2 on an
// H100: a mixed step of 575 tokens (past the exact tables: the normal
// approximation of the routed experts' tiles) and a decode step of 64.
func BenchmarkRooflineStepMoE(b *testing.B) {
	m, err := llm.Default().Model("gpt-oss-120b")
	if err != nil {
		b.Fatal(err)
	}
	dev, link := catalogDevice(b, "h100-sxm")
	r := mustRoofline(b, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(2), ScaleUp: link, StepOverheadNs: -1})
	for _, bc := range []struct {
		name  string
		batch Batch
	}{{"mixed-575", Batch{PrefillSeqs: 1, PrefillTokens: 512, PrefillAttn: 512 * 1000, PrefillCtxRead: 744,
		DecodeSeqs: 63, DecodeContext: 63 * 1500}}, {"decode-64", Batch{DecodeSeqs: 64, DecodeContext: 64 * 1500}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				sink += r.StepNs(&bc.batch)
			}
			if sink == 0 {
				b.Fatal("zero step time")
			}
		})
	}
}

func TestRooflineNoAllocs(t *testing.T) {
	r := mustRoofline(t, RooflineConfig{Model: llama31_8B(), Device: testH100(), Layout: parallel.Tensor(2), ScaleUp: testLink, StepOverheadNs: -1})
	batch := Batch{PrefillSeqs: 1, PrefillTokens: 512, DecodeSeqs: 63, DecodeContext: 94500}
	if n := testing.AllocsPerRun(100, func() { r.StepNs(&batch) }); n != 0 {
		t.Errorf("StepNs allocates %g times per call", n)
	}
}

// TestRooflineSlidingWindow: gpt-oss-120b's 18 sliding-window layers read
// at most their 128-token window and attend within it, so a long-context
// decode step reads half the KV an all-layers model would and a late
// prefill chunk does half the attention; inside the window nothing
// changes. Per rank at TP 1 each kind of layer keeps 18·2·8·64·2 = 36,864
// B per token and does 18·4·64·64 = 294,912 FLOPs per pair.
func TestRooflineSlidingWindow(t *testing.T) {
	oss, err := llm.Default().Model("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	full := *oss
	full.SlidingLayers, full.SlidingWindow = 0, 0
	hybrid := mustRoofline(t, RooflineConfig{Model: oss, Device: testH100(), Layout: parallel.Tensor(1)})
	all := mustRoofline(t, RooflineConfig{Model: &full, Device: testH100(), Layout: parallel.Tensor(1)})
	tests := []struct {
		name   string
		b      Batch
		saveNs float64 // what the window saves, by hand
	}{{
		// 8 sequences at 100k tokens, memory-bound: the sliding layers read
		// 8·128 keys, not 800,000: (800,000 − 1024)·36,864 B less at 2.68 TB/s.
		name: "decode 8 × 100k", b: Batch{DecodeSeqs: 8, DecodeContext: 800_000},
		saveNs: (800_000 - 1024) * 36864 / 2.68e12 * 1e9,
	}, {
		// A chunk of 8192 tokens after 90,000, compute-bound: the sliding
		// layers attend to 8192·128 pairs, not PrefillAttn.
		name: "prefill 8192 at 90k",
		b: Batch{PrefillSeqs: 1, PrefillTokens: 8192, PrefillTokensSq: 8192 * 8192,
			PrefillAttn: 8192 * (90_000 + 8193.0/2), PrefillCtxRead: 90_000},
		saveNs: (8192*(90_000+8193.0/2) - 8192*128) * 294_912 / 494.75e12 * 1e9,
	}, {
		name: "prefill 100 from scratch", saveNs: 0, // within the window
		b: Batch{PrefillSeqs: 1, PrefillTokens: 100, PrefillTokensSq: 100 * 100, PrefillAttn: 100 * 101.0 / 2},
	}}
	for _, tc := range tests {
		h, a := float64(hybrid.StepNs(&tc.b)), float64(all.StepNs(&tc.b))
		if math.Abs(a-h-tc.saveNs) > 1 {
			t.Errorf("%s: %.0f ns, all layers %.0f ns: saves %.0f ns, want %.0f", tc.name, h, a, a-h, tc.saveNs)
		}
	}
}

// TestRooflineSlidingSaving: at the catalog's h100-sxm factors, gpt-oss-120b
// decoding eight 100k-token requests costs about a third less per step
// than if its sliding-window layers read the whole context (docs/MODEL.md,
// "What is modelled", says so).
func TestRooflineSlidingSaving(t *testing.T) {
	m, err := llm.Default().Model("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := hardware.Default().Accelerator("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	full := *m
	full.SlidingLayers, full.SlidingWindow = 0, 0
	b := Batch{DecodeSeqs: 8, DecodeContext: 8 * 100_000}
	sliding := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(1), StepOverheadNs: -1}).StepNs(&b)
	whole := mustRoofline(t, RooflineConfig{Model: &full, Device: dev, Layout: parallel.Tensor(1), StepOverheadNs: -1}).StepNs(&b)
	t.Logf("gpt-oss-120b, eight 100k-token decodes on h100-sxm: %.2f ms with sliding windows, %.2f ms without",
		float64(sliding)/1e6, float64(whole)/1e6)
	if r := float64(sliding) / float64(whole); r < 0.6 || r > 0.7 {
		t.Errorf("sliding/whole = %.3f, want about 0.64", r)
	}
}

// roundNs is math.Round: on random prices of every magnitude, on halves,
// and on the floats either side of each half.
func TestRoundNsIsRound(t *testing.T) {
	xs := []float64{0, 0.25, 0.5, 0.49999999999999994, 1, 1.5, 2.5, 1 << 49, 1<<50 - 0.5, 1 << 50, 1e15, 1 << 53}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		e := rng.IntN(52)
		k := float64(rng.Int64N(1<<uint(e)+1)) + 0.5
		xs = append(xs, k, math.Nextafter(k, 0), math.Nextafter(k, math.Inf(1)),
			rng.Float64()*math.Ldexp(1, e), rng.ExpFloat64()*1e6)
	}
	for _, x := range xs {
		if got, want := roundNs(x), int64(math.Round(x)); got != want {
			t.Fatalf("roundNs(%v) = %d, math.Round gives %d", x, got, want)
		}
	}
}
