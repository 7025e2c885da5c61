package perf

import (
	"fmt"
	"math"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

// RooflineConfig configures a Roofline. Zero MFU or MBU means "the device's
// catalog value"; StepOverheadNs = -1 means "the device's catalog value" (0
// is a real zero overhead).
type RooflineConfig struct {
	Model          *llm.Model
	Device         hardware.Accelerator // one TP rank
	Layout         parallel.Layout      // the instance's degrees (parallel.Tensor(tp) for TP only)
	ScaleUp        hardware.Link        // link the all-reduces run over; ignored when TP == 1
	MFU            float64              // fraction of peak FLOP/s prompt tokens reach; 0 = Device.MFU
	DecodeMFU      float64              // fraction decode tokens reach; 0 = Device.Serving.DecodeMFU, else MFU
	MBU            float64              // fraction of peak HBM bandwidth reached; 0 = Device.MBU
	StepOverheadNs int64                // fixed cost per step, ns; -1 = Device.StepOverheadNs
	Compute        string               // tensor-core format the matmuls run in: "bf16" (""), "fp8" or "fp4" (precision.go)
	Release        string               // vLLM release the pool runs ("0.11"; "" = the newest): picks the MoE kernel (moekernels.go)
	OverlapCPU     bool                 // asynchronous scheduling: the step's CPU work runs under the previous step's GPU work
	Experts        ExpertConfig         // expert parallelism (Layout.EP > 1) only: experts.go
}

// Roofline is the default step-time model. For one step of a batch it
// charges, per TP rank,
//
//	time = max(prefillFLOPs/(peak·MFU) + decodeFLOPs/(peak·DecodeMFU) + expertFLOPs/(peak·MFU),
//	           bytes/(bw·MBU), layers·floor) + moeLayers·moeFixed + allReduce + cpu + overhead
//
// where, with n = Batch.Tokens() new tokens in the step:
//
//   - FLOPs = (n·FLOPsPerToken + AttnFLOPsPerPair·(PrefillAttn + DecodeContext)) / TP,
//     the prompt tokens' share (PrefillTokens, PrefillAttn) priced at MFU
//     and the decode tokens' (DecodeSeqs, DecodeContext) at DecodeMFU: a
//     decode step's matrix products have one row per sequence, far from
//     the large tiles prompt chunks fill. Draft tokens a speculative
//     decode step verifies (SpecTokens, SpecAttn) are decode rows too:
//     vLLM runs a uniform verify batch of k+1 query tokens per sequence
//     as a decode batch (one full CUDA graph), reading each sequence's KV
//     once.
//     FLOPsPerToken = 2·active params covers every matmul, the LM head
//     included (vLLM computes logits only for each sequence's last token,
//     so prefill is over-charged by vocab·hidden·2 per token, < 1% for
//     Llama-class models). Attention scores and values cost
//     AttnFLOPsPerPair per attended query·key pair.
//   - bytes = weights/TP + KVBytesPerTokenPerShard(TP)·(DecodeContext +
//     PrefillCtxRead + n). Weights are read once per step, as stored; for a
//     MoE model the shared parameters (attention, embeddings, router,
//     shared experts, dense layers: llm.Model.SharedBytesTotal) plus the
//     routed experts the step touches. KV is read for every cached token
//     attended (decode context and the cache a prefill chunk extends) and
//     written once for each new token. Activations are ignored: they are
//     small next to weights at decode and hidden under compute at prefill.
//   - expertFLOPs, and the routed experts' bytes (MoE models only): the
//     kernel vLLM runs them with (moekernels.go) on the step's n tokens
//     routed top-k of E — the experts touched read once, each expert's
//     tokens padded up to the kernel's M tile (moe.go) — sharded by TP,
//     or whole on each device under expert parallelism (experts.go). A
//     weight-only kernel (packed FP4 unpacked in registers: Marlin,
//     matmul_ogs) reads them at the accelerator's WeightOnlyMoEMBU and
//     multiplies them at its WeightOnlyMoEMFU instead of MBU and MFU.
//   - moeFixed (Device.Serving.MoELayerFixedNs): the fixed time of a MoE
//     layer's kernel chain, measured (hardware/serving.go).
//   - floor (Device.Serving): the least GPU time per layer, kernel launches
//     bound. vLLM V1 replays one full CUDA graph for a pure-decode batch
//     (LayerFloorNs) and piecewise graphs with attention launched eagerly
//     for a batch with prompt tokens (LayerFloorMixedNs).
//   - allReduce (TP > 1): two all-reduces per layer (after attention and
//     after the MLP) of n·hidden·2 bytes each (BF16 activations). A ring
//     all-reduce takes 2(TP−1) steps, each paying ScaleUp.LatencyNs (the
//     link's small-message latency), and sends 2(TP−1)/TP of the data per
//     rank over ScaleUp.BandwidthBps × Device.Serving.AllReduceBW (the
//     share of the link an all-reduce of a step's activations reaches;
//     0 = all); once a step's messages exceed 8 MiB, vLLM's NCCL path, at
//     AllReduceBWLarge × the bandwidth (0 = the same share). The
//     all-reduces are not overlapped with compute.
//   - cpu (Device.Serving): the engine core's CPU work per step,
//     StepPerSeqNs per scheduled sequence plus StepPerTokenNs per scheduled
//     token (input preparation, sampling, output processing), serialised
//     with the forward pass as in vLLM V1 without async scheduling. With
//     OverlapCPU (async scheduling: the engine core plans and prepares step
//     k+1 and processes step k−1's outputs while step k runs) the step
//     takes the longer of the two: max(GPU + all-reduce, cpu) + overhead.
//   - overhead is a fixed per-step cost (scheduler pass, launches, the
//     engine-core loop) independent of the batch.
//   - Sliding-window layers (a hybrid model such as gpt-oss-120b) attend to
//     at most the last window W tokens: their share of KVBytesPerToken and
//     AttnFLOPsPerPair is charged on min(DecodeContext, DecodeSeqs·W) decode
//     keys, min(PrefillCtxRead, PrefillSeqs·(W−1)) cached keys a prefill
//     chunk reads and min(PrefillAttn, PrefillTokens·W) prefill pairs, and
//     KV is written for every new token. The batch carries sums only, so
//     these are exact when every sequence's context is past the window (or
//     every one within it) and upper bounds otherwise; the full layers are
//     charged as above.
//
// An empty batch costs 0. A Roofline is immutable after NewRoofline and
// StepNs does not allocate; all per-model constants are precomputed.
type Roofline struct {
	nsPerFLOP       float64 // 1e9 / (peak·MFU) per rank
	nsPerFLOPDecode float64 // 1e9 / (peak·DecodeMFU) per rank
	nsPerByte       float64 // 1e9 / (bw·MBU) per rank
	flopsPerTokRank float64 // FLOPsPerToken / TP; a MoE model's without its routed experts
	attnPerPairRank float64 // AttnFLOPsPerPair / TP
	denseBytesRank  float64 // weight bytes always read per rank (dense: all; MoE: shared)
	kvBytesRank     float64 // KV bytes per token per rank (a hybrid model's full layers)
	arNsPerToken    float64 // all-reduce transfer time per new token, ns
	arLargeNs       float64 // the same once a step's messages exceed 8 MiB (NCCL)
	arLargeTokens   float64 // tokens past which a step's messages exceed 8 MiB
	fixedNs         float64 // overhead + all-reduce latencies, ns
	perSeqNs        float64 // CPU per scheduled sequence, ns
	perTokenNs      float64 // CPU per scheduled token, ns
	floorNs         float64 // least GPU time of a pure-decode step, ns
	floorMixedNs    float64 // least GPU time of a step with prompt tokens, ns
	overlapCPU      bool    // CPU work overlaps the GPU's (async scheduling)
	// sliding is a hybrid model's sliding-window layers; nil without. A
	// pointer keeps a Roofline within two cache lines (96-byte objects),
	// which a many-instance run, latency-bound, notices.
	sliding *slidingTerms
	// routed is a MoE model's routed experts sharded by TP (moe.go); nil
	// for a dense model or under expert parallelism.
	routed *routedTerms
	// experts is the expert-parallel MoE terms (experts.go); nil unless
	// Layout.EP > 1, when the routed experts are priced per device for
	// the whole group's tokens.
	experts *expertTerms
}

// slidingTerms are a hybrid model's sliding-window layers, per rank.
type slidingTerms struct {
	window      float64 // tokens a sliding layer attends to
	kvBytes     float64 // KV bytes per token
	attnPerPair float64 // attention FLOPs per query·key pair
}

// NewRoofline validates cfg, fills the device defaults, and precomputes the
// per-step constants. It returns an error naming the field for a nil model,
// TP < 1, an efficiency factor outside (0, 1], a device without the chosen
// peak or bandwidth, a negative overhead, or a TP > 1 with a link of no
// bandwidth.
func NewRoofline(cfg RooflineConfig) (*Roofline, error) {
	if err := cfg.fillDefaults(); err != nil {
		return nil, err
	}
	m, tp := cfg.Model, float64(cfg.Layout.TP)
	peak := cfg.Device.PeakFLOPS(matmulFormat(m.WeightDType, cfg.Compute))
	r := &Roofline{
		nsPerFLOP:       1e9 / (peak * cfg.MFU),
		nsPerFLOPDecode: 1e9 / (peak * cfg.DecodeMFU),
		nsPerByte:       1e9 / (cfg.Device.MemoryBandwidthBps * cfg.MBU),
		flopsPerTokRank: m.FLOPsPerToken() / tp,
		attnPerPairRank: m.AttnFLOPsPerPair() / tp,
		kvBytesRank:     m.KVBytesPerTokenPerShard(cfg.Layout.TP),
		fixedNs:         float64(cfg.StepOverheadNs),
		perSeqNs:        cfg.Device.Serving.StepPerSeqNs,
		perTokenNs:      cfg.Device.Serving.StepPerTokenNs,
		floorNs:         float64(m.Layers) * cfg.Device.Serving.LayerFloorNs,
		floorMixedNs:    float64(m.Layers) * cfg.Device.Serving.LayerFloorMixedNs,
		overlapCPU:      cfg.OverlapCPU,
	}
	if m.SlidingLayers > 0 {
		r.splitSliding(m, cfg.Layout.TP)
	}
	if err := r.splitWeights(&cfg); err != nil {
		return nil, err
	}
	if cfg.Layout.TP > 1 {
		allReduces := 2 * float64(m.Layers)
		perRankBytes := 2 * (tp - 1) / tp * float64(m.Hidden) * 2
		bw := cfg.ScaleUp.BandwidthBps
		if e := cfg.Device.Serving.AllReduceBW; e > 0 {
			bw *= e
		}
		r.arNsPerToken = allReduces * perRankBytes / bw * 1e9
		r.arLargeNs, r.arLargeTokens = r.arNsPerToken, customAllReduceMax/(float64(m.Hidden)*2)
		if e := cfg.Device.Serving.AllReduceBWLarge; e > 0 {
			r.arLargeNs = allReduces * perRankBytes / (cfg.ScaleUp.BandwidthBps * e) * 1e9
		}
		r.fixedNs += allReduces * 2 * (tp - 1) * float64(cfg.ScaleUp.LatencyNs)
	}
	return r, nil
}

// splitWeights sets the weight bytes a device reads: a dense model's all,
// a MoE model's shared weights always and its routed experts as the step
// touches them — sharded by TP, or whole on each device under expert
// parallelism (experts.go).
func (r *Roofline) splitWeights(cfg *RooflineConfig) error {
	m, tp := cfg.Model, float64(cfg.Layout.TP)
	x, err := newExpertTerms(cfg)
	switch {
	case err != nil:
		return err
	case x != nil:
		r.experts = x
		r.flopsPerTokRank = nonExpertFLOPsPerToken(m) / tp
		r.denseBytesRank = m.SharedBytesTotal() / tp
	case isMoE(m):
		r.flopsPerTokRank = nonExpertFLOPsPerToken(m) / tp
		r.denseBytesRank = m.SharedBytesTotal() / tp
		k := moeKernelOf(cfg)
		r.routed = newRoutedTerms(m, k, m.Experts, cfg.Layout.TP, expertScales(m, *cfg, k), moeFixedNs(cfg))
	default:
		r.denseBytesRank = m.WeightBytesTotal() / tp
	}
	return nil
}

// isMoE reports whether m routes its tokens to experts.
func isMoE(m *llm.Model) bool {
	return m.Experts > 0 && m.ExpertsPerTok > 0 && m.Experts > m.ExpertsPerTok
}

// moeKernelOf is the kernel cfg's pool runs its routed experts with.
func moeKernelOf(cfg *RooflineConfig) moeKernel {
	return selectMoEKernel(cfg.Device.Arch, expertDType(cfg.Model), cfg.Release)
}

// moeFixedNs is the fixed time a step's MoE layers' kernel chains take.
func moeFixedNs(cfg *RooflineConfig) float64 {
	return float64(cfg.Model.MoELayers()) * cfg.Device.Serving.MoELayerFixedNs
}

// splitSliding divides a hybrid model's KV bytes and attention FLOPs per
// rank between its full and its sliding-window layers.
func (r *Roofline) splitSliding(m *llm.Model, tp int) {
	perLayer := m.KVBytesPerLayerTokenPerShard(tp)
	attnPerLayer := m.AttnFLOPsPerPair() / float64(m.Layers) / float64(tp)
	r.kvBytesRank = float64(m.FullLayers()) * perLayer
	r.attnPerPairRank = float64(m.FullLayers()) * attnPerLayer
	r.sliding = &slidingTerms{window: float64(m.SlidingWindow), kvBytes: float64(m.SlidingLayers) * perLayer,
		attnPerPair: float64(m.SlidingLayers) * attnPerLayer}
}

// fillDefaults replaces zero factors with the device's and validates.
func (c *RooflineConfig) fillDefaults() error {
	if c.Model == nil {
		return fmt.Errorf("perf: roofline: model is nil")
	}
	if c.Layout.TP < 1 {
		return fmt.Errorf("perf: roofline %s: tp %d < 1", c.Device.Name, c.Layout.TP)
	}
	if c.MFU == 0 {
		c.MFU = c.Device.MFU
	}
	if c.MBU == 0 {
		c.MBU = c.Device.MBU
	}
	if c.DecodeMFU == 0 {
		c.DecodeMFU = c.Device.Serving.DecodeMFU
	}
	if c.DecodeMFU == 0 {
		c.DecodeMFU = c.MFU
	}
	c.Compute = computeName(c.Compute)
	if c.StepOverheadNs == -1 {
		c.StepOverheadNs = c.Device.StepOverheadNs
	}
	return c.validate()
}

func (c *RooflineConfig) validate() error {
	name := c.Device.Name
	switch {
	case !(c.MFU > 0 && c.MFU <= 1):
		return fmt.Errorf("perf: roofline %s: mfu %g not in (0, 1]", name, c.MFU)
	case !(c.DecodeMFU > 0 && c.DecodeMFU <= 1):
		return fmt.Errorf("perf: roofline %s: decode mfu %g not in (0, 1]", name, c.DecodeMFU)
	case !(c.MBU > 0 && c.MBU <= 1):
		return fmt.Errorf("perf: roofline %s: mbu %g not in (0, 1]", name, c.MBU)
	case c.StepOverheadNs < 0:
		return fmt.Errorf("perf: roofline %s: step overhead %d ns < 0", name, c.StepOverheadNs)
	case !(c.Device.MemoryBandwidthBps > 0):
		return fmt.Errorf("perf: roofline %s: memory bandwidth %g B/s <= 0", name, c.Device.MemoryBandwidthBps)
	case !knownFormat(c.Compute):
		return fmt.Errorf("perf: roofline %s: unknown compute format %q (known: bf16, fp8, fp4)", name, c.Compute)
	case !(c.Device.PeakFLOPS(c.Compute) > 0):
		return fmt.Errorf("perf: roofline %s: %s peak %g FLOP/s <= 0 (device has no %s tensor cores)",
			name, computeName(c.Compute), c.Device.PeakFLOPS(c.Compute), computeName(c.Compute))
	case c.Layout.TP > 1 && !(c.ScaleUp.BandwidthBps > 0):
		return fmt.Errorf("perf: roofline %s: tp %d needs a scale-up link, %q has bandwidth %g B/s",
			name, c.Layout.TP, c.ScaleUp.Name, c.ScaleUp.BandwidthBps)
	case c.Layout.TP > 1 && c.ScaleUp.LatencyNs < 0:
		return fmt.Errorf("perf: roofline %s: link %q latency %d ns < 0", name, c.ScaleUp.Name, c.ScaleUp.LatencyNs)
	}
	return nil
}

// StepNs returns the duration of one step in nanoseconds (see Roofline).
// Cost: O(1), no allocation; a MoE step reads its routed experts'
// expectations from tables up to 8,192 tokens and computes them (a few
// math.Erfc) beyond (moe.go).
func (r *Roofline) StepNs(b *Batch) int64 {
	if b.Empty() {
		return 0
	}
	return roundNs(min(r.stepNs(b), maxStepNs))
}

// roundNs is int64(math.Round(x)), faster where a step's price lies: for x
// in [1, 2⁵⁰) the float sum x + 0.5 is exact, or rounded by less than the
// distance to the next integer, so truncating it rounds half away from
// zero as math.Round does (TestRoundNsIsRound).
func roundNs(x float64) int64 {
	if x >= 1 && x < 1<<50 {
		return int64(x + 0.5)
	}
	return int64(math.Round(x))
}

// customAllReduceMax is the largest all-reduce vLLM's custom kernels take,
// 8 MiB (CustomAllreduce max_size); larger ones go through NCCL.
const customAllReduceMax = 8 << 20

// maxStepNs caps one step at about 11.6 days: a limit no realistic step
// reaches, which keeps absurd factors from overflowing the clock.
const maxStepNs = 1e15

// stepNs is StepNs in float64 nanoseconds.
func (r *Roofline) stepNs(b *Batch) float64 {
	var x expertWork
	if r.experts != nil {
		x = r.experts.work(b.Tokens())
	}
	return r.rankNs(b, x) + r.fixedNs
}

// expertWork is what a step's routed experts add on one device: matmul
// FLOPs (scaled to the rest's peak, priced at MFU: moe.go), weight bytes
// and the kernel chains' fixed time.
type expertWork struct{ flops, bytes, fixedNs float64 }

// rankNs is one device's time for its rank's batch b, without the fixed
// costs, when the expert-parallel group's routed experts add x (TP-sharded
// experts are b's own).
func (r *Roofline) rankNs(b *Batch, x expertWork) float64 {
	if r.routed != nil {
		x.flops, x.bytes = r.routed.work(b.Tokens(), 0)
		x.fixedNs = r.routed.fixedNs
	}
	n := float64(b.Tokens())
	prefillFLOPs := float64(b.PrefillTokens)*r.flopsPerTokRank + b.PrefillAttn*r.attnPerPairRank
	decodeFLOPs := float64(b.DecodeSeqs)*r.flopsPerTokRank + float64(b.DecodeContext)*r.attnPerPairRank
	if b.SpecTokens > 0 { // verified draft tokens: decode rows, their KV read with their sequence's
		decodeFLOPs += float64(b.SpecTokens)*r.flopsPerTokRank + float64(b.SpecAttn)*r.attnPerPairRank
	}
	kvTokens := float64(b.DecodeContext+b.PrefillCtxRead) + n
	bytes := r.denseBytesRank + kvTokens*r.kvBytesRank + x.bytes
	if r.sliding != nil {
		pf, df, by := r.sliding.work(b, n)
		prefillFLOPs, decodeFLOPs, bytes = prefillFLOPs+pf, decodeFLOPs+df, bytes+by
	}
	floor := r.floorNs
	if b.PrefillSeqs > 0 {
		floor = r.floorMixedNs
	}
	compute := (prefillFLOPs+x.flops)*r.nsPerFLOP + decodeFLOPs*r.nsPerFLOPDecode
	gpu := max(compute, bytes*r.nsPerByte, floor) + x.fixedNs
	cpu := float64(b.PrefillSeqs+b.DecodeSeqs)*r.perSeqNs + n*r.perTokenNs
	ar := n * r.arNsPerToken
	if n > r.arLargeTokens {
		ar = n * r.arLargeNs
	}
	if r.overlapCPU {
		return max(gpu+ar, cpu)
	}
	return gpu + ar + cpu
}

// GroupStepNs prices one synchronous step of a data-parallel group from
// each rank's batch (nil: the rank runs a dummy step): every device
// computes its rank's tokens and the group's expert work, the step waits
// for the slowest, then the all-to-all (see expertTerms). Without expert
// parallelism it prices the largest rank's step. Cost: O(ranks), no
// allocation.
func (r *Roofline) GroupStepNs(ranks []*Batch) int64 {
	var total, largest float64
	for _, b := range ranks {
		if b != nil {
			n := float64(b.Tokens())
			total, largest = total+n, max(largest, n)
		}
	}
	if total == 0 {
		return 0
	}
	var x expertWork
	var a2a float64
	if r.experts != nil {
		x = r.experts.work(int(total))
		a2a = largest*r.experts.a2aNsPerToken + r.experts.a2aFixedNs
	}
	var idle Batch
	worst := 0.0
	for _, b := range ranks {
		if b == nil {
			b = &idle
		}
		worst = max(worst, r.rankNs(b, x))
	}
	return roundNs(min(worst+a2a+r.fixedNs, maxStepNs))
}

// work is the attention FLOPs of the prompt and the decode tokens and the
// KV bytes per rank of the sliding-window layers in a step of n new tokens
// (see Roofline).
func (t *slidingTerms) work(b *Batch, n float64) (prefillFLOPs, decodeFLOPs, bytes float64) {
	decode := math.Min(float64(b.DecodeContext), float64(b.DecodeSeqs)*t.window)
	pairs := decode
	if b.SpecTokens > 0 {
		pairs += math.Min(float64(b.SpecAttn), float64(b.SpecTokens)*t.window)
	}
	prefillPairs := math.Min(b.PrefillAttn, float64(b.PrefillTokens)*t.window)
	cached := math.Min(float64(b.PrefillCtxRead), float64(b.PrefillSeqs)*(t.window-1))
	return prefillPairs * t.attnPerPair, pairs * t.attnPerPair, (decode + cached + n) * t.kvBytes
}

// expertDType is the format m's routed experts are stored in.
func expertDType(m *llm.Model) llm.DType {
	if m.ExpertDType != "" {
		return m.ExpertDType
	}
	return m.WeightDType
}
