package perf

import (
	"math"
	"testing"

	"handoff/models/llm"
	"handoff/models/parallel"
)

// smallMoE is a 2-layer MoE of 8 experts, top-2, hidden 1024.
func smallMoE() *llm.Model {
	return &llm.Model{Name: "small-moe", Layers: 2, Hidden: 1024, Heads: 8, KVHeads: 8, HeadDim: 128,
		Intermediate: 2048, Vocab: 32000, ParamsTotal: 1e9, ParamsActive: 0.4e9, Experts: 8, ExpertsPerTok: 2,
		Attention: llm.AttentionGQA, WeightBytes: 2, ExpertWeightBytes: 2, KVBytes: 2, MaxContext: 8192}
}

func moeRoofline(t *testing.T, l parallel.Layout) *Roofline {
	t.Helper()
	return mustRoofline(t, RooflineConfig{Model: smallMoE(), Device: testH100(), Layout: l, ScaleUp: testLink,
		StepOverheadNs: -1})
}

// TestAllToAllBytesByHand: per MoE layer a dispatch and a combine; a
// device of a TP 1 rank sends each of its n tokens to its k = 2 experts,
// 3/4 of them off the device at EP 4, 1024 values of 2 bytes each way:
// 2 layers · n · 2 · 1024 · (2 + 2) · 3/4 bytes over 450 GB/s × 0.8, and
// 2 passes × 2 layers of the link's 1 µs.
func TestAllToAllBytesByHand(t *testing.T) {
	r := moeRoofline(t, parallel.Layout{TP: 1, DP: 4, EP: 4, PP: 1})
	const n = 10
	bytes := 2.0 * n * 2 * 1024 * (2 + 2) * 3 / 4
	wantNs := bytes/(450e9*alltoallShare)*1e9 + 4*1000
	got := n*r.experts.a2aNsPerToken + r.experts.a2aFixedNs
	if math.Abs(got-wantNs) > 1e-6 {
		t.Errorf("all-to-all = %.3f ns, want %.3f", got, wantNs)
	}
	// Computing in FP8, the dispatch sends one byte a value (the combine
	// stays BF16): 2 · n · 2 · 1024 · (1 + 2) · 3/4 bytes.
	m := smallMoE().WithPrecision(llm.FP8, llm.FP8, "")
	fp8 := mustRoofline(t, RooflineConfig{Model: m, Device: testH100(), ScaleUp: testLink, StepOverheadNs: -1,
		Layout: parallel.Layout{TP: 1, DP: 4, EP: 4, PP: 1}, Compute: "fp8"})
	bytes = 2.0 * n * 2 * 1024 * (1 + 2) * 3 / 4
	wantNs = bytes/(450e9*alltoallShare)*1e9 + 4*1000
	if got := n*fp8.experts.a2aNsPerToken + fp8.experts.a2aFixedNs; math.Abs(got-wantNs) > 1e-6 {
		t.Errorf("fp8 all-to-all = %.3f ns, want %.3f", got, wantNs)
	}
}

// TestGroupWaitsForLargestRank: two ranks with the same tokens (so the
// same expert work and all-to-all) but one reading far more KV: the group
// step is the heavier rank's, as if both were it.
func TestGroupWaitsForLargestRank(t *testing.T) {
	r := moeRoofline(t, parallel.Layout{TP: 1, DP: 2, EP: 2, PP: 1})
	light := &Batch{DecodeSeqs: 64, DecodeContext: 64 * 100}
	heavy := &Batch{DecodeSeqs: 64, DecodeContext: 64 * 100_000}
	mixed := r.GroupStepNs([]*Batch{light, heavy})
	if both := r.GroupStepNs([]*Batch{heavy, heavy}); mixed != both {
		t.Errorf("light+heavy = %d ns, heavy+heavy = %d ns: the step must wait for the heavier rank", mixed, both)
	}
	if lights := r.GroupStepNs([]*Batch{light, light}); lights >= mixed {
		t.Errorf("light+light = %d ns, not below light+heavy %d ns", lights, mixed)
	}
	if idle := r.GroupStepNs([]*Batch{nil, heavy}); idle > mixed || idle <= 0 {
		t.Errorf("idle+heavy = %d ns, want in (0, %d]: an idle rank runs a dummy step", idle, mixed)
	}
	if r.GroupStepNs([]*Batch{nil, nil}) != 0 {
		t.Error("an all-idle group step must cost 0")
	}
}

// TestImbalanceByHand: E = 8, k = 2, EP = 4, T = 100 tokens: mean 50 a
// device, variance per token 2·¼·¾·6/7, so the busiest device takes
// 1 + √(2 ln 4)·√(100·0.3214)/50 ≈ 1.189 times the mean.
func TestImbalanceByHand(t *testing.T) {
	r := moeRoofline(t, parallel.Layout{TP: 1, DP: 4, EP: 4, PP: 1})
	want := 1 + math.Sqrt(2*math.Log(4))*math.Sqrt(100*2*0.25*0.75*6/7)/50
	if got := r.Imbalance(100); math.Abs(got-want) > 1e-12 {
		t.Errorf("imbalance = %.6f, want %.6f", got, want)
	}
	if got := r.Imbalance(1); got > 4*2.0/2 {
		t.Errorf("imbalance of one token %.3f exceeds its cap", got)
	}
	fixed := mustRoofline(t, RooflineConfig{Model: smallMoE(), Device: testH100(), ScaleUp: testLink,
		Layout: parallel.Layout{TP: 1, DP: 4, EP: 4, PP: 1}, Experts: ExpertConfig{Imbalance: 1.5}})
	if got := fixed.Imbalance(100); got != 1.5 {
		t.Errorf("stated imbalance = %g, want 1.5", got)
	}
}

// TestExpertParallelSpansDomains: a group beyond its scale-up domain needs
// a scale-out link, and its all-to-all then runs at the slower path.
func TestExpertParallelSpansDomains(t *testing.T) {
	cfg := RooflineConfig{Model: smallMoE(), Device: testH100(), ScaleUp: testLink,
		Layout: parallel.Layout{TP: 1, DP: 8, EP: 8, PP: 1}, Experts: ExpertConfig{Domain: 4}}
	if _, err := NewRoofline(cfg); err == nil {
		t.Fatal("a group over two domains without a scale-out link was accepted")
	}
	cfg.Experts.ScaleOut = testLink
	cfg.Experts.ScaleOut.BandwidthBps = 50e9
	r := mustRoofline(t, cfg)
	inside := moeRoofline(t, parallel.Layout{TP: 1, DP: 8, EP: 8, PP: 1})
	if r.experts.a2aNsPerToken <= inside.experts.a2aNsPerToken {
		t.Errorf("spanning two domains (%.3g ns/token) is not slower than one (%.3g)",
			r.experts.a2aNsPerToken, inside.experts.a2aNsPerToken)
	}
}

// BenchmarkGroupStep prices one step of a 32-rank expert-parallel group of
// DeepSeek-V3 across two scale-up domains: O(ranks), no allocation.
func BenchmarkGroupStep(b *testing.B) {
	m, err := llm.Default().Model("deepseek-v3")
	if err != nil {
		b.Fatal(err)
	}
	out := testLink
	out.BandwidthBps = 50e9
	r := mustRoofline(b, RooflineConfig{Model: m, Device: testH100(), ScaleUp: testLink, Compute: "fp8",
		Layout: parallel.Layout{TP: 1, DP: 32, EP: 32, PP: 1}, Experts: ExpertConfig{ScaleOut: out, Domain: 16}})
	ranks := make([]*Batch, 32)
	for i := range ranks {
		if i%4 != 3 {
			ranks[i] = &Batch{DecodeSeqs: 16 + i, DecodeContext: int64(16+i) * 3000}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		r.GroupStepNs(ranks)
	}
}
