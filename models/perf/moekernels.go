package perf

import (
	"strconv"
	"strings"

	"handoff/hardware"
	"handoff/models/llm"
)

// MoE kernels.
//
// vLLM runs a MoE layer's routed experts as grouped matmuls: the tokens
// routed to each expert are gathered, padded up to the kernel's M tile
// (moe_align_block_size, or the kernel's own routing) and multiplied by
// that expert's weights, read as stored. Which kernel runs depends on the
// GPU generation, the format the experts are stored in and the vLLM
// release; moeKernels is that choice as data, each row with where vLLM
// makes it. What a kernel decides for the roofline is its M tile (rows of
// one tile, from the step's tokens) and how it lays the weights out (the
// padding of the per-rank intermediate and hidden widths, read and
// multiplied like real weights).
//
// | arch         | experts     | vLLM   | kernel                                   |
// |--------------|-------------|--------|------------------------------------------|
// | sm90         | mxfp4       | ≤ 0.11 | Marlin MoE, weight-only W4A16            |
// | sm90         | mxfp4       | ≥ 0.12 | triton_kernels matmul_ogs, weight-only   |
// | sm80, sm90   | nvfp4       | all    | Marlin MoE, weight-only (FP4 Marlin)     |
// | sm80         | mxfp4, fp8  | all    | Marlin MoE, weight-only                  |
// | sm100        | mxfp4       | all    | FlashInfer TRT-LLM-gen FP4 block-scale   |
// | sm100        | nvfp4       | all    | FlashInfer CUTLASS fused MoE             |
// | sm90, sm100  | fp8         | all    | Triton fused_moe (< 128 tokens), DeepGEMM |
// | cdna3, cdna4 | mxfp4       | all    | triton_kernels matmul_ogs (AMD flags)    |
// | any          | bf16, fp16  | all    | Triton fused_moe                         |
//
// Whether the matmul runs at the FP4, FP8 or BF16 peak is the format
// rule of precision.go (the wider of the weights' and the activations'):
// a weight-only kernel unpacks the weights in registers and runs BF16
// tensor cores; Blackwell with FP4 activations runs FP4 tensor cores.
// Unpacking costs no bound of its own: it is ALU work inside the matmul
// that overlaps the weight loads (Marlin: the packed words go to shared
// memory by cp.async and are dequantized in registers before the BF16
// mma, csrc/moe/marlin_moe_wna16/marlin_template.h).
type moeKernel struct {
	name string
	// tile is the M tile in rows for a step of tokens tokens routed
	// top-k over the experts in the kernel's weight tensor.
	tile func(tokens, topK, experts int) int
	// padInter and padHidden: the kernel stores each expert with its
	// per-rank intermediate and its hidden width rounded up to these
	// multiples (1: as the model has them).
	padInter, padHidden int
	// weightOnly: the kernel reads packed FP4 (or FP8) experts and unpacks
	// them in registers under its loads, running wider tensor cores;
	// it reaches the accelerator's weight-only MoE efficiencies
	// (hardware.Serving.WeightOnlyMoEMBU, WeightOnlyMoEMFU).
	weightOnly bool
	source     string
}

// moeKernelRow is one row of the kernel table: the kernel vLLM runs on
// arch for experts stored as one of dtypes, in releases [from, until)
// (minor versions; until 0 = every later release).
type moeKernelRow struct {
	arch        []hardware.Arch // nil: any
	dtypes      []llm.DType
	from, until int
	kernel      moeKernel
}

var (
	marlinMoE = moeKernel{weightOnly: true, name: "marlin", tile: marlinTile, padInter: 128, padHidden: 256,
		source: "vllm v0.11.0 quantization/mxfp4.py get_mxfp4_backend (capability < 9, or no triton_kernels: MARLIN), " +
			"Mxfp4MoEMethod.create_weights (intermediate to 128, hidden to 256), fused_moe/fused_marlin_moe.py"}
	marlinFP4 = moeKernel{weightOnly: true, name: "marlin", tile: marlinTile, padInter: 1, padHidden: 1,
		source: "vllm v0.11.0 quantization/utils/nvfp4_moe_support.py detect_nvfp4_moe_support (no CUTLASS FP4: " +
			"Marlin FP4 MoE); its layout's padding not read"}
	oaiTriton = moeKernel{weightOnly: true, name: "triton_kernels matmul_ogs", tile: oaiTritonTile, padInter: 64, padHidden: 1,
		source: "vllm PR #28788 (triton_kernels vendored, default on Hopper from v0.12; PR #27370); create_weights pads " +
			"intermediate to 64; triton_kernels matmul_ogs_details/opt_flags.py make_default_opt_flags_nvidia"}
	trtllmFP4 = moeKernel{name: "flashinfer trtllm fp4", tile: trtllmTile, padInter: 256, padHidden: 256,
		source: "vllm v0.11.0 quantization/mxfp4.py (SM100 with FlashInfer: trtllm_fp4_block_scale_moe, intermediate and " +
			"hidden to 256, _get_tile_tokens_dim)"}
	cutlassFP4 = moeKernel{name: "flashinfer cutlass fp4", tile: blackwellTile, padInter: 1, padHidden: 1,
		source: "vllm v0.11.0 nvfp4_moe_support.py and flashinfer_utils.py get_flashinfer_moe_backend (default " +
			"\"throughput\": FlashInfer CUTLASS fused MoE); tile: the 128-row block-scaled MMA, UNVERIFIED (FlashInfer " +
			"autotunes its CUTLASS tactics)"}
	fp8Block = moeKernel{name: "triton fused_moe fp8 / deepgemm", tile: fp8BlockTile, padInter: 1, padHidden: 1,
		source: "vllm v0.11.0 fused_moe/fused_moe.py get_default_config (block FP8: BLOCK_SIZE_M 64), " +
			"fused_moe/deep_gemm_moe.py _valid_deep_gemm_shape (DeepGEMM from M >= its M alignment), " +
			"deep_gemm_utils.py ep_scatter (each expert's tokens rounded up to 128)"}
	amdTriton = moeKernel{weightOnly: true, name: "triton_kernels matmul_ogs (rocm)", tile: amdTritonTile, padInter: 256, padHidden: 256,
		source: "vllm v0.11.0 get_mxfp4_backend (ROCm with triton_kernels: TRITON), create_weights (ROCm: 256, 256); " +
			"opt_flags.py make_default_opt_flags_amd"}
	tritonMoE = moeKernel{name: "triton fused_moe", tile: tritonTile, padInter: 1, padHidden: 1,
		source: "vllm v0.11.0 fused_moe/fused_moe.py get_default_config (M <= E: BLOCK_SIZE_M 16, else 64)"}
)

// moeKernels is the kernel table; the first row that matches wins, and
// tritonMoE, vLLM's generic path, runs what no row names.
var moeKernels = []moeKernelRow{
	{arch: []hardware.Arch{hardware.ArchHopper}, dtypes: []llm.DType{llm.MXFP4}, until: 12, kernel: marlinMoE},
	{arch: []hardware.Arch{hardware.ArchHopper}, dtypes: []llm.DType{llm.MXFP4}, from: 12, kernel: oaiTriton},
	{arch: []hardware.Arch{hardware.ArchHopper, hardware.ArchAmpere}, dtypes: []llm.DType{llm.NVFP4}, kernel: marlinFP4},
	{arch: []hardware.Arch{hardware.ArchAmpere}, dtypes: []llm.DType{llm.MXFP4, llm.FP8}, kernel: marlinMoE},
	{arch: []hardware.Arch{hardware.ArchBlackwell}, dtypes: []llm.DType{llm.MXFP4}, kernel: trtllmFP4},
	{arch: []hardware.Arch{hardware.ArchBlackwell}, dtypes: []llm.DType{llm.NVFP4}, kernel: cutlassFP4},
	{arch: []hardware.Arch{hardware.ArchHopper, hardware.ArchBlackwell}, dtypes: []llm.DType{llm.FP8}, kernel: fp8Block},
	{arch: []hardware.Arch{hardware.ArchCDNA3, hardware.ArchCDNA4}, dtypes: []llm.DType{llm.MXFP4}, kernel: amdTriton},
}

// selectMoEKernel is the kernel vLLM release (a minor version such as
// "0.11"; "" or one handoff does not parse = the newest) runs on arch for
// experts stored as d.
func selectMoEKernel(arch hardware.Arch, d llm.DType, release string) moeKernel {
	minor := releaseMinor(release)
	for _, row := range moeKernels {
		if (row.arch == nil || contains(row.arch, arch)) && contains(row.dtypes, d) &&
			minor >= row.from && (row.until == 0 || minor < row.until) {
			return row.kernel
		}
	}
	return tritonMoE
}

// releaseMinor is the minor version of a "0.N" release; the newest for ""
// or anything else.
func releaseMinor(release string) int {
	if n, err := strconv.Atoi(strings.TrimPrefix(release, "0.")); err == nil && strings.HasPrefix(release, "0.") {
		return n
	}
	return 1 << 30
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// marlinTile is fused_marlin_moe's block_size_m: the first of 8, 16, 32,
// 48, 64 at which the mean tokens per expert fill less than 0.9 of a
// tile, else 64.
func marlinTile(tokens, topK, experts int) int {
	perExpert := float64(tokens) * float64(topK) / float64(experts)
	for _, bm := range [...]int{8, 16, 32, 48} {
		if perExpert/float64(bm) < 0.9 {
			return bm
		}
	}
	return 64
}

// oaiTritonTile is matmul_ogs's block_m on NVIDIA: with t = max(1,
// tokens·k // E) tokens per expert, max(16, min(next_pow2(2t), 64)) up to
// 64 tokens per expert (ragged and memory-bound: a larger tile reads an
// expert's weights once), else max(16, min(next_pow2(t), 128)).
func oaiTritonTile(tokens, topK, experts int) int {
	t := max(1, tokens*topK/experts)
	if t <= 64 {
		return max(16, min(nextPow2(2*t), 64))
	}
	return max(16, min(nextPow2(t), 128))
}

// trtllmTile is FlashInfer TRT-LLM-gen's tile_tokens_dim: the tokens per
// expert (tokens·k // E) times an imbalance of 1.3, to the next power of
// two, within [8, 64].
func trtllmTile(tokens, topK, experts int) int {
	t := int(float64(tokens*topK/experts) * 1.3)
	return min(max(nextPow2(t), 8), 64)
}

// fp8BlockTile: block-FP8 experts run Triton's fused_moe with
// BLOCK_SIZE_M 64 below 128 tokens and DeepGEMM, which aligns each
// expert's tokens to 128, from there.
func fp8BlockTile(tokens, _, _ int) int {
	if tokens < 128 {
		return 64
	}
	return 128
}

// amdTritonTile is matmul_ogs's block_m on ROCm: max(32, min(next_pow2(t),
// 64)) for t tokens per expert, 128 from 512 tokens per expert.
func amdTritonTile(tokens, topK, experts int) int {
	t := max(1, tokens*topK/experts)
	if t >= 512 {
		return 128
	}
	return max(32, min(nextPow2(t), 64))
}

// blackwellTile is 128 rows, the M of Blackwell's block-scaled MMA.
func blackwellTile(_, _, _ int) int { return 128 }

// tritonTile is fused_moe's default BLOCK_SIZE_M for unquantized experts:
// 16 while the tokens do not outnumber the experts, else 64.
func tritonTile(tokens, _, experts int) int {
	if tokens <= experts {
		return 16
	}
	return 64
}

// nextPow2 is the smallest power of two ≥ n, 1 for n < 1 (vLLM's
// next_power_of_2).
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// padFactor is how much larger the kernel stores one expert than the
// model has it: (inter rounded up · hidden rounded up) / (inter · hidden),
// inter being one rank's share of the intermediate width (inter // split,
// as vLLM's intermediate_size_per_partition); 1 when the model does not
// give the widths.
func (k moeKernel) padFactor(m *llm.Model, split int) float64 {
	inter, hidden := m.Intermediate/split, m.Hidden
	if inter <= 0 || hidden <= 0 {
		return 1
	}
	return float64(roundUp(inter, k.padInter)) * float64(roundUp(hidden, k.padHidden)) / (float64(inter) * float64(hidden))
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }
