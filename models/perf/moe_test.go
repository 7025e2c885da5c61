package perf

import (
	"math"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

// TestDistinctExpertsByHand: T tokens routed top-k of E touch
// E·(1 − (1 − k/E)^T) distinct experts in expectation: top-2 of 8 touches
// 2 with one token, 8·(1 − 9/16) = 3.5 with two and 8·(1 − 27/64) = 4.625
// with three; a large step touches all 8.
func TestDistinctExpertsByHand(t *testing.T) {
	r := moeRoofline(t, parallel.Tensor(1))
	for _, tc := range []struct {
		tokens int
		want   float64
	}{{0, 0}, {1, 2}, {2, 3.5}, {3, 4.625}, {600, 8}} {
		if got := r.routed.touched(tc.tokens); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%d tokens touch %.6f experts, want %.6f", tc.tokens, got, tc.want)
		}
	}
}

// TestExpectationsAgainstEnumeration: every routing of 3 tokens, each to 2
// of 4 experts (6³ equally likely draws), enumerated: the mean number of
// distinct experts and of 2-row tiles over the experts is what the
// closed form and the binomial sum give.
func TestExpectationsAgainstEnumeration(t *testing.T) {
	pairs := [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	var distinct, tiles float64
	for _, a := range pairs {
		for _, b := range pairs {
			for _, c := range pairs {
				var n [4]int
				for _, p := range [][2]int{a, b, c} {
					n[p[0]]++
					n[p[1]]++
				}
				for _, ne := range n {
					if ne > 0 {
						distinct++
					}
					tiles += float64((ne + 1) / 2)
				}
			}
		}
	}
	draws := float64(len(pairs) * len(pairs) * len(pairs))
	if got, want := 4*(1-math.Pow(0.5, 3)), distinct/draws; math.Abs(got-want) > 1e-12 {
		t.Errorf("distinct experts: closed form %.6f, enumeration %.6f", got, want)
	}
	if got, want := 4*tilesExact(3, 0.5, 2), tiles/draws; math.Abs(got-want) > 1e-12 {
		t.Errorf("2-row tiles: binomial sum %.6f, enumeration %.6f", got, want)
	}
}

// TestTilePaddingByHand: an expert's tokens are padded up to the kernel's
// M tile. Three tokens on an expert with a 16-row tile cost 16 rows; two
// tokens each reaching an expert with probability ½ cost it 16 rows with
// probability ¾. On the roofline (vLLM's Triton kernel: 16-row tiles
// while the tokens do not outnumber the 8 experts), a step of 3 tokens
// top-2 runs 8·16·(1 − (¾)³) = 74 rows per layer for 6 routed tokens.
func TestTilePaddingByHand(t *testing.T) {
	if got := 16 * tilesExact(3, 1, 16); got != 16 {
		t.Errorf("3 tokens on one expert: %g rows, want 16", got)
	}
	if got := 16 * tilesExact(2, 0.5, 16); math.Abs(got-12) > 1e-12 {
		t.Errorf("2 tokens at ½: %g rows, want 12", got)
	}
	if got := tilesExact(40, 1, 16); got != 3 {
		t.Errorf("40 tokens in 16-row tiles: %g tiles, want 3", got)
	}
	r := moeRoofline(t, parallel.Tensor(1))
	if got := r.routed.rows(3); math.Abs(got-74) > 1e-9 {
		t.Errorf("3 tokens: %.6f rows, want 74", got)
	}
	flops, _ := r.routed.work(3, 0)
	if want := 74 * 2 * smallMoE().ExpertParamsEach(); math.Abs(flops-want) > 1e-6*want {
		t.Errorf("3 tokens: expert FLOPs %g, want %g", flops, want)
	}
}

// TestTilesNormalMeetsExact: from 512 tokens the roofline takes the normal
// approximation of the binomial; it is within 1.5% of the exact sum for
// the catalog's routings and the kernels' tiles (the worst from 512 to
// 4,096 tokens is 1.09%, at 16 tokens per expert in 16-row tiles, where
// the binomial's skew shows).
func TestTilesNormalMeetsExact(t *testing.T) {
	for _, p := range []float64{2.0 / 8, 4.0 / 128, 8.0 / 128, 8.0 / 256, 8.0 / 384} {
		for _, bm := range []int{8, 16, 32, 64, 128} {
			for _, tokens := range []int{512, 771, 2048, 2584} {
				exact, normal := tilesExact(tokens, p, bm), tilesNormal(tokens, p, math.Pow(1-p, float64(tokens)), bm)
				if math.Abs(normal-exact) > 0.015*exact {
					t.Errorf("p %.4f, tile %d, %d tokens: normal %.5f, exact %.5f", p, bm, tokens, normal, exact)
				}
			}
		}
	}
}

// alignedMoE is a 4-layer MoE whose widths need no padding by any kernel
// (hidden 4096, expert intermediate 2048): 1e9 shared parameters and 32
// experts of 3·4096·2048·4 = 100,663,296 parameters, top-4, MXFP4.
func alignedMoE() *llm.Model {
	const each = 3 * 4096 * 2048 * 4
	return &llm.Model{Name: "aligned-moe", Layers: 4, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 2048, Vocab: 32000, ParamsTotal: 1e9 + 32*each, ParamsActive: 1e9 + 4*each,
		Experts: 32, ExpertsPerTok: 4, Attention: llm.AttentionGQA, WeightDType: llm.BF16, WeightBytes: 2,
		ExpertDType: llm.MXFP4, ExpertWeightBytes: llm.MXFP4.Bytes(), KVBytes: 2, MaxContext: 8192}
}

// catalogAccel is the embedded catalog's accelerator name.
func catalogAccel(t *testing.T, name string) hardware.Accelerator {
	t.Helper()
	d, _ := catalogDevice(t, name)
	return d
}

// TestWeightOnlyFP4DecodeReadsPackedBytes: on an H100 under vLLM 0.11
// (Marlin, weight-only), a decode step of one token reads the BF16 shared
// weights and exactly the packed MXFP4 bytes of its k = 4 experts per
// layer, 4 · 100,663,296 · 4.25/8 B, at the catalog's bandwidth; unpacking
// adds no bound, and the MoE layers add their measured fixed time. No
// floor holds the step up.
func TestWeightOnlyFP4DecodeReadsPackedBytes(t *testing.T) {
	m, dev := alignedMoE(), catalogAccel(t, "h100-sxm")
	r := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(1), StepOverheadNs: 0,
		Release: "0.11"})
	if r.routed.kernel.name != "marlin" {
		t.Fatalf("kernel %q, want marlin", r.routed.kernel.name)
	}
	const each = 3 * 4096 * 2048 * 4
	rest := 1e9*2 + 2*m.KVBytesPerToken() // one token of context read, one written
	experts := 4 * each * 4.25 / 8
	bytes := rest + experts
	want := (rest/dev.MBU+experts/weightOnlyMBU(dev))/dev.MemoryBandwidthBps*1e9 + 4*dev.Serving.MoELayerFixedNs +
		dev.Serving.StepPerSeqNs + dev.Serving.StepPerTokenNs
	if got := r.StepNs(&Batch{DecodeSeqs: 1, DecodeContext: 1}); math.Abs(float64(got)-want) > 1 {
		t.Errorf("batch-1 decode %d ns, want %.0f (packed bytes %.4g B)", got, want, bytes)
	}
}

// weightOnlyMBU is the share of bandwidth dev's weight-only MoE kernels
// reach (its MBU when unset).
func weightOnlyMBU(dev hardware.Accelerator) float64 {
	if e := dev.Serving.WeightOnlyMoEMBU; e > 0 {
		return e
	}
	return dev.MBU
}

// TestWeightOnlyMoEEfficiencies: a weight-only kernel's experts are read
// at the accelerator's weight_only_moe_mbu and multiplied at its
// weight_only_moe_mfu, the rest of the step at MBU and MFU; a kernel that
// is not weight-only (BF16 fused_moe) ignores both.
func TestWeightOnlyMoEEfficiencies(t *testing.T) {
	m, dev := alignedMoE(), catalogAccel(t, "h100-sxm")
	dev.Serving.WeightOnlyMoEMBU, dev.Serving.WeightOnlyMoEMFU = 0, 0
	cfg := RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(1), StepOverheadNs: 0, Release: "0.11"}
	base := mustRoofline(t, cfg)
	cfg.Device.Serving.WeightOnlyMoEMBU, cfg.Device.Serving.WeightOnlyMoEMFU = dev.MBU/2, dev.MFU/4
	slow := mustRoofline(t, cfg)
	const each = 3 * 4096 * 2048 * 4
	experts := 4 * each * 4.25 / 8 // batch 1: 4 experts a layer, packed
	want := float64(base.StepNs(&Batch{DecodeSeqs: 1, DecodeContext: 1})) + experts/(dev.MemoryBandwidthBps*dev.MBU)*1e9
	if got := float64(slow.StepNs(&Batch{DecodeSeqs: 1, DecodeContext: 1})); math.Abs(got-want) > 1 {
		t.Errorf("batch-1 decode at half the bandwidth for experts: %.0f ns, want %.0f", got, want)
	}
	bx, bb := base.routed.work(4096, 0)
	sx, sb := slow.routed.work(4096, 0)
	if math.Abs(sx/bx-4) > 1e-9 || math.Abs(sb/bb-2) > 1e-9 {
		t.Errorf("prefill of 4,096 tokens: expert FLOPs ×%g, bytes ×%g in the rest's units, want ×4 and ×2", sx/bx, sb/bb)
	}
	m.ExpertDType, m.ExpertWeightBytes = llm.BF16, 2
	cfg.Model = m
	if r := mustRoofline(t, cfg); r.routed.kernel.weightOnly {
		t.Fatalf("BF16 experts run %q, a weight-only kernel", r.routed.kernel.name)
	}
}

// TestGPTOSSDecodeOnH100: gpt-oss-120b's batch-1 decode step on an H100
// at TP 1 under vLLM 0.11 reads its 2.12e9 BF16 shared weights and 4
// experts per layer in Marlin's layout, the intermediate 2880 padded to
// 2944 and the hidden 2880 to 3072 (×1.0904), plus the MoE layers' fixed
// time: 3.1 ms of GPU time, where the fitted MoE floor held it at 4.6 ms.
func TestGPTOSSDecodeOnH100(t *testing.T) {
	m, err := llm.Default().Model("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	dev := catalogAccel(t, "h100-sxm")
	r := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(1), StepOverheadNs: 0,
		Release: "0.11"})
	pad := 2944.0 * 3072 / (2880 * 2880)
	experts := 4 * m.ExpertBytesTotal() / 128 * pad
	kv := 2 * 36 * 2 * 8 * 64 * 2.0 // one token read, one written, every layer
	gpu := ((m.SharedBytesTotal()+kv)/dev.MBU+experts/weightOnlyMBU(dev))/dev.MemoryBandwidthBps*1e9 +
		36*dev.Serving.MoELayerFixedNs
	want := gpu + dev.Serving.StepPerSeqNs + dev.Serving.StepPerTokenNs
	got := r.StepNs(&Batch{DecodeSeqs: 1, DecodeContext: 1})
	t.Logf("gpt-oss-120b batch-1 decode on h100-sxm, TP 1, Marlin: %.3f ms (GPU %.3f ms)", float64(got)/1e6, gpu/1e6)
	if math.Abs(float64(got)-want) > 1 {
		t.Errorf("batch-1 decode %d ns, want %.0f", got, want)
	}
}

// TestBlackwellNativeFP4AgainstHopperWeightOnly: MXFP4 experts on
// Hopper (no FP4 tensor cores) run weight-only, their matmuls at the BF16
// peak; on Blackwell with FP4 activations they run FP4 tensor cores,
// here at 9 PF against the BF16 2.25 PF the rest runs at, so a padded
// row costs a quarter; with BF16 activations (vLLM's default MXFP4 × BF16
// TRT-LLM kernel) Blackwell too runs them at the BF16 peak. Both read the
// experts packed, in their kernels' layouts; Hopper's weight-only kernel
// at its weight-only MoE efficiencies.
func TestBlackwellNativeFP4AgainstHopperWeightOnly(t *testing.T) {
	m, h100 := alignedMoE(), catalogAccel(t, "h100-sxm")
	hopper := mustRoofline(t, RooflineConfig{Model: m, Device: h100, Layout: parallel.Tensor(1)})
	native := mustRoofline(t, RooflineConfig{Model: m, Device: catalogAccel(t, "b200"), Layout: parallel.Tensor(1),
		Compute: "fp4"})
	w4a16 := mustRoofline(t, RooflineConfig{Model: m, Device: catalogAccel(t, "b200"), Layout: parallel.Tensor(1)})
	row := 2.0 * m.ExpertParamsEach()
	for _, tc := range []struct {
		name   string
		r      *Roofline
		kernel string
		row    float64
		bytes  float64 // the packed bytes' multiple, in the rest's bandwidth
	}{{"hopper", hopper, "triton_kernels matmul_ogs", row * h100.MFU / h100.Serving.WeightOnlyMoEMFU,
		h100.MBU / h100.Serving.WeightOnlyMoEMBU}, {"blackwell fp4", native, "flashinfer trtllm fp4", row / 4, 1},
		{"blackwell bf16 activations", w4a16, "flashinfer trtllm fp4", row, 1}} {
		if tc.r.routed.kernel.name != tc.kernel || math.Abs(tc.r.routed.flopsRow-tc.row) > 1e-6*tc.row {
			t.Errorf("%s: kernel %q, FLOPs per row %g (at the rest's peak); want %q, %g", tc.name,
				tc.r.routed.kernel.name, tc.r.routed.flopsRow, tc.kernel, tc.row)
		}
		if want := m.ExpertBytesTotal() / 32 * tc.bytes; math.Abs(tc.r.routed.bytesEach-want) > 1e-6*want {
			t.Errorf("%s: expert bytes %g, want the packed %g", tc.name, tc.r.routed.bytesEach, want)
		}
	}
}

// TestSharedExpertsRunDense: DeepSeek-V3's shared expert and three dense
// layers are shared weights: read every step and computed one row per
// token, never padded to a tile; only the 256 routed experts are. A
// batch-1 decode at TP 8 reads the shared weights and 8 routed experts;
// FLOPs outside the routed experts grow by exactly one token's for each
// token added.
func TestSharedExpertsRunDense(t *testing.T) {
	m, err := llm.Default().Model("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	dev := testH100()
	dev.Arch = hardware.ArchHopper
	r := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(8), ScaleUp: testLink,
		Compute: "fp8"})
	sharedExperts := 58 * 3 * 7168 * 2048.0 // one per MoE layer
	if m.SharedParams() < sharedExperts {
		t.Fatalf("shared params %.4g leave out the shared experts' %.4g", m.SharedParams(), sharedExperts)
	}
	if want := m.SharedBytesTotal() / 8; r.denseBytesRank != want {
		t.Errorf("shared bytes per rank %g, want %g", r.denseBytesRank, want)
	}
	_, bytes := r.routed.work(1, 0)
	if want := 8 * m.ExpertBytesTotal() / 256 / 8; math.Abs(bytes-want) > 1e-9*want {
		t.Errorf("one token reads %g B of routed experts per rank, want 8 experts' %g", bytes, want)
	}
	if want := 2 * (m.ParamsActive - 8*m.ExpertParamsEach()) / 8; math.Abs(r.flopsPerTokRank-want) > 1e-9*want {
		t.Errorf("FLOPs per token outside the routed experts %g, want %g", r.flopsPerTokRank, want)
	}
	if got := r.routed.kernel.tile(100, 8, 256); got != 64 {
		t.Errorf("block FP8 tile at 100 tokens %d, want Triton's 64", got)
	}
}
