package perf

import (
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
)

// waferModel has round figures for hand computation: 10e9 params in BF16 →
// 20e9 weight bytes and 20e9 FLOPs per token; KV 2·10 layers·2 kv heads·100·2
// B = 8,000 B per token; attention 4·10 layers·10 heads·100 = 40,000 FLOPs
// per query·key pair; hidden 1,000 → 2,000 B of activations per token hop.
func waferModel() *llm.Model {
	return &llm.Model{Name: "round-10b", Layers: 10, Hidden: 1000, Heads: 10, KVHeads: 2, HeadDim: 100,
		ParamsTotal: 10e9, ParamsActive: 10e9, Attention: llm.AttentionGQA, WeightBytes: 2, KVBytes: 2,
		MaxContext: 100_000}
}

// testWafer: peak 100 PFLOP/s at MFU 0.5 → 2e-8 ns per FLOP (decode),
// prefill efficiency 0.25 → 8e-8 ns per prompt FLOP; 10 PB/s at MBU 0.5 →
// 2e-7 ns per byte; 20 GB of SRAM; a layer costs 9 µs + 1 µs per 1,000 of
// hidden width (10 µs for waferModel: 100 µs for its 10 layers); overhead
// 10 µs.
func testWafer() hardware.Accelerator {
	return hardware.Accelerator{Name: "test-wafer", Kind: hardware.KindWafer, MemoryBytes: 20e9,
		MemoryBandwidthBps: 10e15, BF16FLOPS: 100e15, MFU: 0.5, MBU: 0.5, StepOverheadNs: 10_000,
		Wafer: hardware.Wafer{LayerLatencyNs: 9_000, WidthLatencyNs: 1_000, PrefillEfficiency: 0.25}}
}

// waferLink: 100 GB/s, 5 µs → a 2,000 B token hop takes 20 ns.
var waferLink = hardware.Link{Name: "test-wafer-link", BandwidthBps: 100e9, LatencyNs: 5_000}

func mustWafer(t testing.TB, wafers int) *Wafer {
	t.Helper()
	return mustWaferOf(t, waferModel(), wafers)
}

func mustWaferOf(t testing.TB, m *llm.Model, wafers int) *Wafer {
	t.Helper()
	x, err := NewWafer(WaferConfig{Model: m, Device: testWafer(), Wafers: wafers, Link: waferLink,
		StepOverheadNs: -1})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestWaferHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		wafers int
		edit   func(*llm.Model) // nil: waferModel as is
		b      Batch
		wantNs int64
	}{{
		// layers 10·10,000 + overhead 10,000; weights 20e9 + KV 8,000·1 written
		// = 20,000,008,000 B · 2e-7 = 4,000.0016 ns (compute 20e9 FLOPs · 2e-8 =
		// 400 ns, hidden).
		name: "one wafer, 1 seq, ctx 0", wafers: 1,
		b: Batch{DecodeSeqs: 1}, wantNs: 114_000,
	}, {
		// Twice the layers: 20·10,000 + 10,000; KV 16,000 B per token:
		// (20e9 + 16,000)·2e-7 = 4,000.0032.
		name: "one wafer, 20 layers", wafers: 1, edit: func(m *llm.Model) { m.Layers = 20 },
		b: Batch{DecodeSeqs: 1}, wantNs: 214_000,
	}, {
		// Twice the width: a layer is 9 + 2 µs, 10·11,000 + 10,000; bytes as
		// in the first case.
		name: "one wafer, hidden 2000", wafers: 1, edit: func(m *llm.Model) { m.Hidden = 2000 },
		b: Batch{DecodeSeqs: 1}, wantNs: 124_000,
	}, {
		// The same layers over 4 wafers: 100,000 + 3·5,000 link + 10,000; hop
		// 3·20 = 60; stage bytes 5e9 + 2,000 = 5,000,002,000 · 2e-7 =
		// 1,000.0004, ×4 stages = 4,000.0016.
		name: "four wafers, 1 seq, ctx 0", wafers: 4,
		b: Batch{DecodeSeqs: 1}, wantNs: 129_060,
	}, {
		// 100,000 + 5,000 + 10,000 = 115,000; hop 1·20 = 20;
		// stage bytes 10e9 + 4,000·1,001 = 10,004,004,000 · 2e-7 = 2,000.8008 ns
		// (compute (20e9 + 1,000·40,000)/2 · 2e-8 = 200.4 ns, hidden); ×2 stages
		// = 4,001.6016 → 119,021.6.
		name: "two wafers, 1 seq, ctx 1000", wafers: 2,
		b: Batch{DecodeSeqs: 1, DecodeContext: 1000}, wantNs: 119_022,
	}, {
		// 4 seqs → 2 micro-batches of 2 tokens: hop 2·20 = 40; stage bytes
		// 10e9 + 4,000·4,004/2 = 10,008,008,000 · 2e-7 = 2,001.6016; ×2 = 4,003.2032.
		name: "two wafers, 4 seqs, ctx 4000", wafers: 2,
		b: Batch{DecodeSeqs: 4, DecodeContext: 4000}, wantNs: 119_043,
	}, {
		// Compute-bound prefill, 1 micro-batch: FLOPs 10,000·20e9 + 50,005,000·40,000
		// = 2.020002e14 · 8e-8 / 2 stages = 8,080,008 ns per stage, ×2 = 16,160,016;
		// hop 10,000·20 = 200,000; + 115,000 = 16,475,016.
		name: "two wafers, prefill 10k", wafers: 2,
		b:      Batch{PrefillSeqs: 1, PrefillTokens: 10_000, PrefillAttn: 10_000 * 10_001 / 2},
		wantNs: 16_475_016,
	}, {
		// 4 seqs → 2 micro-batches, n = 103. Prompt FLOPs (2e12 + 5,050·40,000)·8e-8
		// = 160,016.16; decode (6e10 + 3,000·40,000)·2e-8 = 1,202.4; /(2·2) =
		// 40,304.64 per stage (bytes: 2,001.2412, hidden); ×2 = 80,609.28;
		// hop 51.5·20 = 1,030 → 196,639.28.
		name: "two wafers, mixed", wafers: 2,
		b:      Batch{PrefillSeqs: 1, PrefillTokens: 100, PrefillAttn: 5050, DecodeSeqs: 3, DecodeContext: 3000},
		wantNs: 196_639,
	}, {
		name: "empty", wafers: 2, b: Batch{}, wantNs: 0,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := waferModel()
			if tc.edit != nil {
				tc.edit(m)
			}
			if got := mustWaferOf(t, m, tc.wafers).StepNs(&tc.b); got != tc.wantNs {
				t.Errorf("StepNs = %d, want %d", got, tc.wantNs)
			}
		})
	}
}

func TestWaferErrors(t *testing.T) {
	gpu := testWafer()
	gpu.Kind = hardware.KindGPU
	small := testWafer()
	small.MemoryBytes = 15e9
	noLayer := testWafer()
	noLayer.Wafer.LayerLatencyNs = 0
	noWidth := testWafer()
	noWidth.Wafer.WidthLatencyNs = 0
	tests := []struct {
		name string
		cfg  WaferConfig
		want string
	}{
		{"nil model", WaferConfig{Device: testWafer(), Wafers: 1}, "model is nil"},
		{"gpu", WaferConfig{Model: waferModel(), Device: gpu, Wafers: 1}, `kind is "gpu", not wafer`},
		{"no wafers", WaferConfig{Model: waferModel(), Device: testWafer()}, "wafers 0 < 1"},
		// 20 GB of weights in one 15 GB wafer: 5 GB over.
		{"weights overflow", WaferConfig{Model: waferModel(), Device: small, Wafers: 1},
			"20.0 GB of weights exceed 1 wafers' 15.0 GB of SRAM by 5.0 GB"},
		{"no link", WaferConfig{Model: waferModel(), Device: testWafer(), Wafers: 2}, "need a pipeline link"},
		{"prefill efficiency", WaferConfig{Model: waferModel(), Device: testWafer(), Wafers: 1, PrefillEfficiency: 1.5},
			"prefill_efficiency 1.5"},
		{"no layer latency", WaferConfig{Model: waferModel(), Device: noLayer, Wafers: 1}, "layer_latency 0 ns"},
		{"no width latency", WaferConfig{Model: waferModel(), Device: noWidth, Wafers: 1}, "width_latency 0 ns"},
		{"negative overhead", WaferConfig{Model: waferModel(), Device: testWafer(), Wafers: 1, StepOverheadNs: -2},
			"step overhead -2 ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewWafer(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestWaferNoAllocs(t *testing.T) {
	x := mustWafer(t, 2)
	b := Batch{PrefillSeqs: 1, PrefillTokens: 100, PrefillAttn: 5050, DecodeSeqs: 3, DecodeContext: 3000}
	if n := testing.AllocsPerRun(100, func() { x.StepNs(&b) }); n != 0 {
		t.Errorf("StepNs allocates %v times per call", n)
	}
}

func BenchmarkWaferStepNs(b *testing.B) {
	x := mustWafer(b, 4)
	batch := Batch{DecodeSeqs: 64, DecodeContext: 64 * 4096}
	for b.Loop() {
		x.StepNs(&batch)
	}
}
