package hardware

import (
	"handoff/models/strictyaml"
	"handoff/models/units"
)

// Serving is what the serving software (vLLM V1) costs on an accelerator
// beyond the roofline's compute and memory terms: the CPU work of each
// engine step, the floor a step cannot go below, a separate efficiency for
// the small matrix products of decode, and the front end that takes a
// request from the client to the engine and its tokens back. They are
// properties of the software stack on that machine, so they are fitted per
// accelerator together with its MFU and MBU (handoff calibrate --fit),
// except MoELayerFixedNs, which is measured. Zero means "not charged".
//
// Where each lives in vLLM V1 (v0.11):
//   - StepPerSeqNs, StepPerTokenNs: the engine core's busy loop runs the
//     scheduler, prepares the inputs (gpu_model_runner._prepare_inputs:
//     positions, slot mapping, block tables per request), samples and
//     turns sampled ids into EngineCoreOutputs (scheduler.update_from_output)
//     on the CPU, serialised with the forward pass when async scheduling is
//     off (its default).
//   - AllReduceBW: vLLM's tensor-parallel all-reduce (its custom one-shot
//     and two-shot kernels for small messages, NCCL for large:
//     distributed/device_communicators/) moves a step's activations, a
//     few hundred kB to a few MB, well below the link's peak.
//   - AllReduceBWLarge: messages above the custom all-reduce's 8 MiB cap
//     (CustomAllreduce max_size in
//     distributed/device_communicators/custom_all_reduce.py) go through
//     NCCL, which drives the link far closer to its peak.
//   - LayerFloorNs, LayerFloorMixedNs: CUDA graphs (compilation
//     CUDAGraphMode FULL_AND_PIECEWISE): a pure-decode batch replays one
//     full graph, a batch with prompt tokens replays piecewise graphs with
//     attention launched eagerly between them, once per layer.
//   - MoELayerFixedNs: a MoE layer's kernel chain (the top-k, the
//     alignment or routing of tokens to experts, the two grouped expert
//     matmuls, the activation, the weighted combine:
//     model_executor/layers/fused_moe/) takes a fixed time beyond the
//     bytes it reads and the FLOPs it does, MEASURED, not fitted: vLLM's
//     benchmarks/kernels/benchmark_moe.py, which times the chain (fused_topk
//     and fused_experts) replayed from a CUDA graph as vLLM's decode runs
//     it, gives 29.45 µs on one H100 for Qwen3-Next-80B's FP8 experts at
//     TP 4 and one token (vLLM PR #44830), whose ten experts' 8 MB take
//     about 2.5 µs at the H100's 3.35 TB/s: 27 µs of fixed cost. Mixtral
//     8x7B's BF16 experts at TP 2 agree (PR #24700: 144.03 µs at one token
//     for 352 MB, 483.14 µs at 64 tokens for all 1,409 MB, a line through
//     both crossing zero bytes at 31 µs). The measured chains are vLLM's
//     Triton fused_moe; the other Hopper chains (Marlin, triton_kernels'
//     matmul_ogs, DeepGEMM) launch the same steps and are charged the
//     same, unmeasured. The routed experts' bytes, FLOPs and tile
//     padding are the roofline's (models/perf/moe.go).
//   - WeightOnlyMoEMBU, WeightOnlyMoEMFU: the shares of peak HBM bandwidth
//     and of peak FLOP/s that the weight-only MoE kernels reach — those
//     that read packed FP4 experts and unpack them in registers under
//     their loads (Marlin MoE, fused_moe/fused_marlin_moe.py; triton_kernels'
//     matmul_ogs): per expert and layer they stream a few MB of scattered,
//     scale-interleaved weights over a handful of M tiles, where the dense
//     GEMMs that set MBU and MFU stream one large matrix. Fitted per
//     accelerator to the measured P/D runs of gpt-oss-120b, the one
//     weight-only MoE model with measurements (handoff calibrate --fit
//     --fit-pd); other MoE kernels (BF16 and FP8 fused_moe, DeepGEMM,
//     Blackwell's native FP4) run at MBU and MFU. Zero: MBU and MFU.
//   - FrontendNs, TokenizeNsPerToken: the API server parses the HTTP
//     request, tokenizes the prompt (entrypoints/openai/serving_completion,
//     InputPreprocessor) and sends it to the engine-core process over ZMQ
//     (v1/engine/core_client.py).
//   - FirstEmitNs, FinalEmitNs: the engine core's outputs go back over ZMQ
//     to the API server's output handler, which detokenizes
//     (v1/engine/output_processor.py) and writes the server-sent event;
//     FinalEmitNs is that path for the last token, through the end of the
//     response.
type Serving struct {
	DecodeMFU          float64 // fraction of peak FLOP/s decode-token matmuls reach; 0 = the device's MFU
	AllReduceBW        float64 // fraction of the scale-up link's bandwidth a TP all-reduce reaches; 0 = all of it
	AllReduceBWLarge   float64 // the same for messages over 8 MiB (NCCL); 0 = AllReduceBW
	StepPerSeqNs       float64 // CPU per sequence scheduled in a step, ns
	StepPerTokenNs     float64 // CPU per token scheduled in a step, ns
	LayerFloorNs       float64 // least GPU time per layer of a pure-decode step (full CUDA graph), ns
	LayerFloorMixedNs  float64 // least GPU time per layer of a step with prompt tokens (piecewise graphs), ns
	FrontendNs         float64 // client to engine: HTTP, validation, API-server to engine-core hop, ns
	TokenizeNsPerToken float64 // prompt tokenization, ns per prompt token
	FirstEmitNs        float64 // engine to client for the first token: hop back, detokenize, SSE write, ns
	FinalEmitNs        float64 // engine to client for the last token, through the end of the response, ns
	MoELayerFixedNs    float64 // fixed GPU time of a MoE layer's kernel chain per step, ns (measured)
	WeightOnlyMoEMBU   float64 // fraction of peak HBM bandwidth weight-only MoE kernels reach; 0 = the device's MBU
	WeightOnlyMoEMFU   float64 // fraction of peak FLOP/s weight-only MoE kernels reach; 0 = the device's MFU
}

// ServingSpec is Serving as written in YAML, inline in an accelerator.
type ServingSpec struct {
	DecodeMFU        float64        `yaml:"decode_mfu,omitempty"`
	AllReduceBW      float64        `yaml:"allreduce_bandwidth,omitempty"`
	AllReduceBWLarge float64        `yaml:"allreduce_bandwidth_large,omitempty"`
	StepPerSeq       units.Duration `yaml:"step_per_seq,omitempty"`
	StepPerToken     units.Duration `yaml:"step_per_token,omitempty"`
	LayerFloor       units.Duration `yaml:"layer_floor,omitempty"`
	LayerFloorMixed  units.Duration `yaml:"layer_floor_mixed,omitempty"`
	Frontend         units.Duration `yaml:"frontend_latency,omitempty"`
	TokenizePerToken units.Duration `yaml:"tokenize_per_token,omitempty"`
	FirstEmit        units.Duration `yaml:"first_token_emit,omitempty"`
	FinalEmit        units.Duration `yaml:"final_emit,omitempty"`
	MoELayerFixed    units.Duration `yaml:"moe_layer_fixed,omitempty"`
	WeightOnlyMoEMBU float64        `yaml:"weight_only_moe_mbu,omitempty"`
	WeightOnlyMoEMFU float64        `yaml:"weight_only_moe_mfu,omitempty"`
}

// check validates s.
func (s ServingSpec) check() error {
	if !(s.DecodeMFU >= 0 && s.DecodeMFU <= 1) {
		return strictyaml.Fieldf("decode_mfu", "must be in (0, 1] (or omitted for mfu)")
	}
	if !(s.AllReduceBW >= 0 && s.AllReduceBW <= 1) {
		return strictyaml.Fieldf("allreduce_bandwidth", "must be in (0, 1] (or omitted for the link's full bandwidth)")
	}
	if !(s.AllReduceBWLarge >= 0 && s.AllReduceBWLarge <= 1) {
		return strictyaml.Fieldf("allreduce_bandwidth_large", "must be in (0, 1] (or omitted for allreduce_bandwidth)")
	}
	if !(s.WeightOnlyMoEMBU >= 0 && s.WeightOnlyMoEMBU <= 1) {
		return strictyaml.Fieldf("weight_only_moe_mbu", "must be in (0, 1] (or omitted for mbu)")
	}
	if !(s.WeightOnlyMoEMFU >= 0 && s.WeightOnlyMoEMFU <= 1) {
		return strictyaml.Fieldf("weight_only_moe_mfu", "must be in (0, 1] (or omitted for mfu)")
	}
	for _, d := range []struct {
		v     units.Duration
		field string
	}{{s.StepPerSeq, "step_per_seq"}, {s.StepPerToken, "step_per_token"}, {s.LayerFloor, "layer_floor"},
		{s.LayerFloorMixed, "layer_floor_mixed"}, {s.Frontend, "frontend_latency"},
		{s.TokenizePerToken, "tokenize_per_token"}, {s.FirstEmit, "first_token_emit"}, {s.FinalEmit, "final_emit"},
		{s.MoELayerFixed, "moe_layer_fixed"}} {
		if d.v < 0 {
			return strictyaml.Fieldf(d.field, "must not be negative")
		}
	}
	if s.FinalEmit < s.FirstEmit { // the last token goes the first's way, then closes the response
		return strictyaml.Fieldf("final_emit", "must be at least first_token_emit (%v)", s.FirstEmit)
	}
	return nil
}

func (s ServingSpec) resolve() Serving {
	return Serving{DecodeMFU: s.DecodeMFU, AllReduceBW: s.AllReduceBW, AllReduceBWLarge: s.AllReduceBWLarge, StepPerSeqNs: float64(s.StepPerSeq), StepPerTokenNs: float64(s.StepPerToken),
		LayerFloorNs: float64(s.LayerFloor), LayerFloorMixedNs: float64(s.LayerFloorMixed),
		FrontendNs: float64(s.Frontend), TokenizeNsPerToken: float64(s.TokenizePerToken),
		FirstEmitNs: float64(s.FirstEmit), FinalEmitNs: float64(s.FinalEmit),
		MoELayerFixedNs: float64(s.MoELayerFixed), WeightOnlyMoEMBU: s.WeightOnlyMoEMBU, WeightOnlyMoEMFU: s.WeightOnlyMoEMFU}
}

func (v Serving) spec() ServingSpec {
	d := func(ns float64) units.Duration { return units.Duration(ns + 0.5) }
	return ServingSpec{DecodeMFU: v.DecodeMFU, AllReduceBW: v.AllReduceBW, AllReduceBWLarge: v.AllReduceBWLarge, StepPerSeq: d(v.StepPerSeqNs), StepPerToken: d(v.StepPerTokenNs),
		LayerFloor: d(v.LayerFloorNs), LayerFloorMixed: d(v.LayerFloorMixedNs), Frontend: d(v.FrontendNs),
		TokenizePerToken: d(v.TokenizeNsPerToken), FirstEmit: d(v.FirstEmitNs), FinalEmit: d(v.FinalEmitNs),
		MoELayerFixed: d(v.MoELayerFixedNs), WeightOnlyMoEMBU: v.WeightOnlyMoEMBU, WeightOnlyMoEMFU: v.WeightOnlyMoEMFU}
}

// EffectiveDecodeMFU is the MFU decode tokens' matmuls reach on a.
func (a Accelerator) EffectiveDecodeMFU() float64 {
	if a.Serving.DecodeMFU > 0 {
		return a.Serving.DecodeMFU
	}
	return a.MFU
}

// borrowFactors fills the unset efficiency and serving fields of the named
// accelerator from the one its factors_from names, in c or in base's
// catalog. The lender must have factors of its own (no chains).
func (c *Catalog) borrowFactors(name string, base func() *Catalog) error {
	a := c.accels[name]
	if a.FactorsFrom == "" {
		return nil
	}
	lender, ok := c.accels[a.FactorsFrom]
	if !ok && base != nil {
		lender, ok = base().accels[a.FactorsFrom]
	}
	switch {
	case !ok:
		return strictyaml.Fieldf("factors_from", "unknown accelerator %q", a.FactorsFrom)
	case lender.FactorsFrom != "" || lender.Name == a.Name:
		return strictyaml.Fieldf("factors_from", "%q does not have factors of its own; name a fitted accelerator", a.FactorsFrom)
	}
	c.accels[name] = a.borrow(lender)
	return nil
}

// borrow returns a with each unset efficiency and serving field taken from
// lender.
func (a Accelerator) borrow(lender Accelerator) Accelerator {
	pick := func(own *float64, lent float64) {
		if *own == 0 {
			*own = lent
		}
	}
	a.lent = lentFields{mfu: a.MFU == 0, mbu: a.MBU == 0, overhead: a.StepOverheadNs == 0}
	pick(&a.MFU, lender.MFU)
	pick(&a.MBU, lender.MBU)
	if a.lent.overhead {
		a.StepOverheadNs = lender.StepOverheadNs
	}
	s, l := &a.Serving, lender.Serving
	for _, f := range []struct {
		own  *float64
		lent float64
	}{{&s.DecodeMFU, l.DecodeMFU}, {&s.AllReduceBW, l.AllReduceBW}, {&s.AllReduceBWLarge, l.AllReduceBWLarge}, {&s.StepPerSeqNs, l.StepPerSeqNs}, {&s.StepPerTokenNs, l.StepPerTokenNs},
		{&s.LayerFloorNs, l.LayerFloorNs}, {&s.LayerFloorMixedNs, l.LayerFloorMixedNs}, {&s.FrontendNs, l.FrontendNs},
		{&s.TokenizeNsPerToken, l.TokenizeNsPerToken}, {&s.FirstEmitNs, l.FirstEmitNs}, {&s.FinalEmitNs, l.FinalEmitNs},
		{&s.MoELayerFixedNs, l.MoELayerFixedNs}, {&s.WeightOnlyMoEMBU, l.WeightOnlyMoEMBU}, {&s.WeightOnlyMoEMFU, l.WeightOnlyMoEMFU}} {
		pick(f.own, f.lent)
	}
	return a
}

// Fitted reports how far to trust a's efficiency and serving factors: ""
// when they are its own; "unfitted: factors borrowed from X" when its MFU
// or MBU are X's; "serving costs borrowed from X" when only the serving
// stack's costs are (its device factors fitted to its own profiles).
func (a Accelerator) Fitted() string {
	switch {
	case a.FactorsFrom == "":
		return ""
	case a.lent.mfu || a.lent.mbu:
		return "unfitted: factors borrowed from " + a.FactorsFrom
	}
	return "serving costs borrowed from " + a.FactorsFrom
}

// lentFields records which efficiency factors an accelerator took from the
// one its factors_from names, so that writing it back (Spec) leaves them
// unset again.
type lentFields struct{ mfu, mbu, overhead bool }

// unlend zeroes in s the factors a borrowed.
func (a Accelerator) unlend(s *AcceleratorSpec) {
	if a.lent.mfu {
		s.MFU = 0
	}
	if a.lent.mbu {
		s.MBU = 0
	}
	if a.lent.overhead {
		s.StepOverhead = 0
	}
}
