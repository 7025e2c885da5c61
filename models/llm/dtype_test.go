package llm

import (
	"math"
	"strings"
	"testing"
)

// TestDTypeBytes: sizes per element by hand, the block scale included
// (MX: 8 scale bits per 32 elements; NVFP4: 8 per 16), and the tensor-core
// format each computes in.
func TestDTypeBytes(t *testing.T) {
	tests := []struct {
		d      DType
		bytes  float64
		format string
	}{
		{BF16, 2, "bf16"}, {FP16, 2, "bf16"}, {FP8, 1, "fp8"},
		{MXFP4, (4 + 8.0/32) / 8, "fp4"}, {NVFP4, (4 + 8.0/16) / 8, "fp4"}, {"", 0, "bf16"},
	}
	for _, tt := range tests {
		if got := tt.d.Bytes(); got != tt.bytes {
			t.Errorf("%q.Bytes() = %v, want %v", tt.d, got, tt.bytes)
		}
		if got := tt.d.TensorFormat(); got != tt.format {
			t.Errorf("%q.TensorFormat() = %q, want %q", tt.d, got, tt.format)
		}
	}
}

func TestParseDType(t *testing.T) {
	for in, want := range map[string]DType{"bf16": BF16, " FP8 ": FP8, "MXFP4": MXFP4, "nvFP4": NVFP4, "fp16": FP16} {
		if got, err := ParseDType(in); got != want || err != nil {
			t.Errorf("ParseDType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseDType("int4")
	if err == nil || !strings.Contains(err.Error(), `unknown dtype "int4" (want one of bf16, fp16, fp8, mxfp4, nvfp4)`) {
		t.Errorf("ParseDType(int4) error = %v", err)
	}
}

// TestWeightBytesByDType: gpt-oss-120b keeps attention and embeddings in
// BF16 and its routed experts in MXFP4. With total 116.83e9, active 5.70e9,
// 128 experts top-4: one expert is (116.83−5.70)e9/124, the experts
// 128/124·111.13e9 = 114.715e9, shared 2.115e9; bytes 2.115e9·2 +
// 114.715e9·0.53125 = 65.17 GB, about the 60.8 GiB (65.3 GB) checkpoint.
func TestWeightBytesByDType(t *testing.T) {
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }
	g := mustModel(t, "gpt-oss-120b")
	experts := 128 * (116.83e9 - 5.70e9) / 124
	shared := 116.83e9 - experts
	if g.WeightDType != BF16 || g.ExpertDType != MXFP4 || g.ExpertWeightBytes != 0.53125 || g.WeightBytes != 2 {
		t.Fatalf("gpt-oss-120b dtypes %q/%q bytes %v/%v", g.WeightDType, g.ExpertDType, g.WeightBytes, g.ExpertWeightBytes)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"shared bytes", g.SharedBytesTotal(), shared * 2},
		{"expert bytes", g.ExpertBytesTotal(), experts * 0.53125},
		{"total", g.WeightBytesTotal(), shared*2 + experts*0.53125},
		{"vs checkpoint", g.WeightBytesTotal(), 60.8 * (1 << 30)},
	}
	for i, c := range checks {
		tol := 1e-12
		if i == 3 {
			tol = 0.01 // within 1% of the released checkpoint
		}
		if !near(c.got, c.want, tol) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	bf := g.WithPrecision("", BF16, "")
	if want := 116.83e9 * 2; !near(bf.WeightBytesTotal(), want, 1e-12) || g.ExpertDType != MXFP4 {
		t.Errorf("BF16 experts: %v, want %v (and the original unchanged)", bf.WeightBytesTotal(), want)
	}
}

// TestWithPrecision: FP8 KV halves the KV bytes; FP8 weights halve a dense
// model's weight bytes; empty dtypes keep the model's.
func TestWithPrecision(t *testing.T) {
	l := mustModel(t, "llama-3.1-70b")
	f := l.WithPrecision(FP8, "", FP8)
	if f.KVBytesPerToken() != l.KVBytesPerToken()/2 || f.KVBytesPerToken() != 2*80*8*128*1 {
		t.Errorf("fp8 KV/token = %v, want %v", f.KVBytesPerToken(), l.KVBytesPerToken()/2)
	}
	if f.WeightBytesTotal() != 70.6e9 || f.KVDType != FP8 || f.WeightDType != FP8 {
		t.Errorf("fp8 weights = %v (%q, kv %q), want 70.6e9", f.WeightBytesTotal(), f.WeightDType, f.KVDType)
	}
	if same := l.WithPrecision("", "", ""); *same != *l {
		t.Errorf("no dtypes changed the model: %+v", same)
	}
	d := mustModel(t, "deepseek-v3").WithPrecision(BF16, NVFP4, "")
	if d.WeightDType != BF16 || d.ExpertDType != NVFP4 || d.ExpertWeightBytes != 0.5625 || d.KVDType != BF16 {
		t.Errorf("deepseek bf16/nvfp4 = %+v", d)
	}
}

func TestMoELayers(t *testing.T) {
	for name, want := range map[string]int{"deepseek-v3": 58, "mixtral-8x7b": 32, "llama-3.1-8b": 0} {
		if got := mustModel(t, name).MoELayers(); got != want {
			t.Errorf("%s MoELayers = %d, want %d", name, got, want)
		}
	}
}

// TestLegacyBytes: weight_bytes / kv_bytes still work, named as a dtype
// when the size is one; a Model built without ExpertWeightBytes stores its
// experts at WeightBytes.
func TestLegacyBytes(t *testing.T) {
	m, err := Spec{Name: "m", Layers: 2, Hidden: 64, Heads: 4, KVHeads: 2, Intermediate: 128, Vocab: 100,
		ParamsTotal: 1e6, MaxContext: 512, WeightBytes: 1, KVBytes: 0.56}.Resolve()
	if err != nil || m.WeightDType != FP8 || m.KVDType != "" || m.KVBytes != 0.56 || m.ExpertWeightBytes != 1 {
		t.Fatalf("legacy = %+v, %v", m, err)
	}
	if again, err := m.Spec().Resolve(); err != nil || *again != *m {
		t.Errorf("round trip = %+v, %v", again, err)
	}
	hand := &Model{ParamsTotal: 10, ParamsActive: 4, Experts: 4, ExpertsPerTok: 1, WeightBytes: 2}
	if got := hand.WeightBytesTotal(); got != 20 {
		t.Errorf("hand-built MoE weights = %v, want 20", got)
	}
}

// TestCatalogPrecisions: the new MoE entries' weights by dtype, by hand,
// and their dense layers and shared experts as their configs give them.
func TestCatalogPrecisions(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	oss20 := 32 * (20.91e9 - 4.19e9) / 28 // experts: 19.109e9
	tests := []struct {
		name           string
		weights        float64
		dense, shared  int
		wdtype, edtype DType
	}{
		{"deepseek-v3", 671e9, 3, 1, FP8, FP8}, {"deepseek-r1", 671e9, 3, 1, FP8, FP8},
		{"kimi-k2", 1.0264e12, 1, 1, FP8, FP8}, {"glm-4.5", 2 * 355e9, 3, 1, BF16, BF16},
		{"minimax-m2", 230e9, 0, 0, FP8, FP8}, {"qwen3-235b-a22b", 2 * 235e9, 0, 0, BF16, BF16},
		{"gpt-oss-20b", (20.91e9-oss20)*2 + oss20*0.53125, 0, 0, BF16, MXFP4},
	}
	for _, tt := range tests {
		m := mustModel(t, tt.name)
		if !near(m.WeightBytesTotal(), tt.weights) || m.DenseLayers != tt.dense || m.SharedExperts != tt.shared ||
			m.WeightDType != tt.wdtype || m.ExpertDType != tt.edtype || m.KVDType != BF16 {
			t.Errorf("%s: weights %v dense %d shared %d %s/%s kv %s; want %v %d %d %s/%s bf16", tt.name,
				m.WeightBytesTotal(), m.DenseLayers, m.SharedExperts, m.WeightDType, m.ExpertDType, m.KVDType,
				tt.weights, tt.dense, tt.shared, tt.wdtype, tt.edtype)
		}
	}
	// gpt-oss-20b's checkpoint is 12.8 GiB; the split above gives 13.76 GB.
	if got := mustModel(t, "gpt-oss-20b").WeightBytesTotal() / (1 << 30); math.Abs(got-12.8) > 0.13 {
		t.Errorf("gpt-oss-20b weights %.2f GiB, want about 12.8", got)
	}
}
