package perf

import (
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

// TestMoEKernelTable: the kernel vLLM runs routed experts with, by GPU
// generation, expert format and release.
func TestMoEKernelTable(t *testing.T) {
	for _, tc := range []struct {
		arch    hardware.Arch
		dtype   llm.DType
		release string
		want    string
	}{
		{hardware.ArchHopper, llm.MXFP4, "0.10", "marlin"},
		{hardware.ArchHopper, llm.MXFP4, "0.11", "marlin"},
		{hardware.ArchHopper, llm.MXFP4, "0.12", "triton_kernels matmul_ogs"},
		{hardware.ArchHopper, llm.MXFP4, "", "triton_kernels matmul_ogs"},
		{hardware.ArchHopper, llm.NVFP4, "0.33", "marlin"},
		{hardware.ArchAmpere, llm.MXFP4, "0.33", "marlin"},
		{hardware.ArchBlackwell, llm.MXFP4, "0.11", "flashinfer trtllm fp4"},
		{hardware.ArchBlackwell, llm.NVFP4, "", "flashinfer cutlass fp4"},
		{hardware.ArchHopper, llm.FP8, "0.11", "triton fused_moe fp8 / deepgemm"},
		{hardware.ArchHopper, llm.BF16, "0.11", "triton fused_moe"},
		{hardware.ArchCDNA4, llm.MXFP4, "", "triton_kernels matmul_ogs (rocm)"},
		{"", llm.MXFP4, "", "triton fused_moe"},
	} {
		if got := selectMoEKernel(tc.arch, tc.dtype, tc.release).name; got != tc.want {
			t.Errorf("%s %s vLLM %q: %q, want %q", tc.arch, tc.dtype, tc.release, got, tc.want)
		}
	}
}

// TestMoETilesByHand: each kernel's M tile from vLLM's and the kernel
// libraries' rules, for gpt-oss-120b's top-4 of 128 experts.
func TestMoETilesByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tile   func(tokens, topK, experts int) int
		tokens int
		want   int
	}{
		{"marlin, 1 token: 4/128 per expert < 0.9·8", marlinTile, 1, 8},
		{"marlin, 230 tokens: 7.19 < 0.9·8", marlinTile, 230, 8},
		{"marlin, 231 tokens: 7.22 ≥ 0.9·8", marlinTile, 231, 16},
		{"marlin, 256 tokens: 8 per expert", marlinTile, 256, 16},
		{"marlin, 1383 tokens: 43.2 ≥ 0.9·48", marlinTile, 1383, 64},
		{"matmul_ogs, 1 token: max(16, 2)", oaiTritonTile, 1, 16},
		{"matmul_ogs, 512 tokens: 16 per expert, 2·16", oaiTritonTile, 512, 32},
		{"matmul_ogs, 8192 tokens: 256 per expert", oaiTritonTile, 8192, 128},
		{"trtllm, 1 token: clamped to 8", trtllmTile, 1, 8},
		{"trtllm, 256 tokens: 8·1.3 → 16", trtllmTile, 256, 16},
		{"trtllm, 8192 tokens: clamped to 64", trtllmTile, 8192, 64},
		{"triton bf16, 100 tokens ≤ 128 experts", tritonTile, 100, 16},
		{"triton bf16, 200 tokens", tritonTile, 200, 64},
		{"block fp8, 127 tokens: Triton", fp8BlockTile, 127, 64},
		{"block fp8, 128 tokens: DeepGEMM", fp8BlockTile, 128, 128},
	} {
		if got := tc.tile(tc.tokens, 4, 128); got != tc.want {
			t.Errorf("%s: tile %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestMoEKernelLayouts: Marlin stores gpt-oss-120b's experts with the
// per-rank intermediate rounded up to 128 and the hidden 2880 to 3072, so
// at TP 2 (1440 → 1536) a stored expert is (1536·3072)/(1440·2880) =
// 1.1378 times the model's; triton_kernels pads the intermediate only, to
// 64 (1440 → 1472); the release picks which a pool pays.
func TestMoEKernelLayouts(t *testing.T) {
	m, err := llm.Default().Model("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := marlinMoE.padFactor(m, 2), 1536.0*3072/(1440*2880); got != want {
		t.Errorf("marlin at TP 2: %.6f, want %.6f", got, want)
	}
	if got, want := oaiTriton.padFactor(m, 2), 1472.0/1440; got != want {
		t.Errorf("matmul_ogs at TP 2: %.6f, want %.6f", got, want)
	}
	dev := testH100()
	dev.Arch = hardware.ArchHopper
	for release, kernel := range map[string]moeKernel{"0.11": marlinMoE, "0.12": oaiTriton} {
		r := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(2), ScaleUp: testLink,
			Release: release})
		if want := m.ExpertBytesTotal() / 128 / 2 * kernel.padFactor(m, 2); r.routed.bytesEach != want {
			t.Errorf("vLLM %s: stored expert %g B per rank, want %g", release, r.routed.bytesEach, want)
		}
	}
}
