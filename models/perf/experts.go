package perf

import (
	"fmt"
	"math"

	"handoff/hardware"
	"handoff/models/llm"
)

// Expert parallelism.
//
// With EP > 1 the routed experts are spread whole over the EP devices
// (parallel.Layout), and with DP > 1 each data-parallel rank runs its own
// batch through attention and the other non-expert weights while the MoE
// layers of all ranks form one group. A step of the group then costs, on
// every device,
//
//	max over ranks r of max(compute_r, bytes_r, floor) + moeFixed + allReduce_r, then + allToAll
//
// where rank r's own tokens n_r are priced as in Roofline without their
// routed experts, and every device adds the expert work of the whole
// group's T = Σ n_r tokens, run by the kernel of moekernels.go over its
// E/EP local experts, each whole (moe.go):
//
//   - expert rows per device: each local expert's tokens of the T padded
//     up to the kernel's M tile, plus the busiest device's surplus tokens
//     over the mean, T·k/EP·(imbalance − 1) (Imbalance: from the top-k
//     draw, or a stated factor);
//   - expert bytes per device: its E/EP experts, each touched by the step
//     with probability 1 − (1 − k/E)^T;
//   - the all-to-all, DP > 1 only (with DP = 1 every device already holds
//     every token, and the experts' outputs meet in the TP all-reduce): per
//     MoE layer a dispatch and a combine, each device sending its share of
//     its rank's tokens (n_r/TP), each token to its k experts, the (EP−1)/EP
//     of them off the device, hidden values wide — in the compute dtype's
//     bytes for the dispatch (DeepEP casts to FP8 when the model computes
//     in it) and BF16 for the combine, as DeepEP's low-latency kernels do
//     (deepseek-ai/DeepEP, csrc/kernels/internode_ll.cu: one message per
//     token and expert, no deduplication). Peers inside the scale-up
//     domain are reached over the scale-up link, the rest over the
//     scale-out NIC, in parallel; each pass pays the slower path's latency.
//     The step does not overlap the all-to-all with compute (DeepEP's
//     two-micro-batch overlap is not modelled).
//
// The step waits for its slowest rank: expert parallelism is synchronous,
// and a rank with nothing to run still joins every step with a dummy
// batch (vLLM's DP ranks of a MoE model, vllm/v1/engine/core.py
// DPEngineCoreProc: execute_dummy_batch).
type expertTerms struct {
	routed          *routedTerms // the device's E/EP experts, whole
	topK            float64      // k
	ep              float64      // EP
	perTokenVar     float64      // variance of one token's experts on a device (hypergeometric)
	maxZ            float64      // expected largest of EP standard normals, √(2 ln EP)
	fixedImbalance  float64      // > 0: a stated imbalance instead of the draw's
	a2aNsPerToken   float64      // dispatch + combine over all MoE layers, per token of a rank
	a2aFixedNs      float64      // the passes' latencies, per step with DP > 1
	maxTokensDevice float64      // cap: a device's experts can take at most T·min(k, E/EP) tokens
}

// ExpertConfig is what a Roofline needs beyond RooflineConfig to price an
// expert-parallel MoE (RooflineConfig.Experts).
type ExpertConfig struct {
	// Imbalance is the busiest device's expert tokens over the mean; 0 =
	// from a uniform top-k draw of each token's experts (Imbalance).
	Imbalance float64
	ScaleOut  hardware.Link // the NIC between scale-up domains; used when the group spans more than one
	Domain    int           // devices one scale-up domain joins; 0 = the whole group
}

// alltoallShare is the share of a link's bandwidth DeepEP's low-latency
// kernels reach: 39–40 GB/s of a ConnectX-7's ~50 GB/s at EP 128–256 in
// DeepEP's published H800 table (deepseek-ai/DeepEP README, "Low-latency
// kernels with pure RDMA"), MEASURED there, not fitted here.
const alltoallShare = 0.8

// newExpertTerms precomputes the expert-parallel terms of cfg, or returns
// nil when the model has no routed experts or the layout does not spread
// them (EP ≤ 1): the Roofline then shards experts by TP as before.
func newExpertTerms(cfg *RooflineConfig) (*expertTerms, error) {
	m, l := cfg.Model, cfg.Layout
	if !isMoE(m) || l.EP <= 1 {
		return nil, nil
	}
	e, k, ep := float64(m.Experts), float64(m.ExpertsPerTok), float64(l.EP)
	x := &expertTerms{topK: k, ep: ep,
		routed:      newRoutedTerms(m, moeKernelOf(cfg), m.Experts/l.EP, 1, expertScales(m, *cfg, moeKernelOf(cfg)), moeFixedNs(cfg)),
		perTokenVar: k * (1 / ep) * (1 - 1/ep) * (e - k) / (e - 1), maxZ: math.Sqrt(2 * math.Log(ep)),
		fixedImbalance: cfg.Experts.Imbalance, maxTokensDevice: math.Min(k, e/ep)}
	if l.DP > 1 {
		if err := x.allToAll(cfg); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// allToAll precomputes the dispatch and combine costs (see expertTerms).
func (x *expertTerms) allToAll(cfg *RooflineConfig) error {
	m, l, ec := cfg.Model, cfg.Layout, cfg.Experts
	group := l.DP * l.TP
	domain := group
	if ec.Domain > 0 && ec.Domain < group {
		domain = ec.Domain
	}
	inside := float64(domain-1) / float64(group-1)
	if inside < 1 && !(ec.ScaleOut.BandwidthBps > 0) {
		return fmt.Errorf("perf: roofline %s: dp × tp = %d devices span more than one scale-up domain of %d "+
			"and there is no scale-out link", cfg.Device.Name, group, domain)
	}
	dispatch := 2.0 // BF16 activations
	if computeName(cfg.Compute) != "bf16" {
		dispatch = 1 // DeepEP's FP8 dispatch
	}
	// Bytes one device sends per token of its rank, over all MoE layers.
	perToken := float64(m.MoELayers()) * x.topK * float64(m.Hidden) * (dispatch + 2) * (x.ep - 1) / x.ep / float64(l.TP)
	nsPerByte := inside / (cfg.ScaleUp.BandwidthBps * alltoallShare)
	latency := float64(cfg.ScaleUp.LatencyNs)
	if inside < 1 {
		nsPerByte = math.Max(nsPerByte, (1-inside)/(ec.ScaleOut.BandwidthBps*alltoallShare))
		latency = math.Max(latency, float64(ec.ScaleOut.LatencyNs))
	}
	x.a2aNsPerToken = perToken * nsPerByte * 1e9
	x.a2aFixedNs = 2 * float64(m.MoELayers()) * latency
	return nil
}

// Imbalance is the expected tokens of the busiest of EP devices over the
// mean when T tokens each pick k distinct experts uniformly from E, spread
// E/EP to a device: the mean is T·k/EP, a device's count the sum of T
// hypergeometric draws of variance v = k·(1/EP)·(1−1/EP)·(E−k)/(E−1), and
// the largest of EP such counts exceeds the mean by about √(2 ln EP)
// standard deviations. Real routing is more skewed than uniform (hot
// experts; vLLM's and SGLang's EPLB rebalance them): set a stated factor
// where it is known.
func (x *expertTerms) imbalance(tokens float64) float64 {
	if x.fixedImbalance > 0 {
		return x.fixedImbalance
	}
	mean := tokens * x.topK / x.ep
	f := 1 + x.maxZ*math.Sqrt(x.perTokenVar*tokens)/mean
	return math.Min(f, x.maxTokensDevice*x.ep/x.topK)
}

// work is what the routed experts add on each device for a group step of
// tokens tokens: the busiest device's rows.
func (x *expertTerms) work(tokens int) expertWork {
	if tokens == 0 {
		return expertWork{fixedNs: x.routed.fixedNs}
	}
	t := float64(tokens)
	surplus := t * x.topK / x.ep * (x.imbalance(t) - 1)
	flops, bytes := x.routed.work(tokens, surplus)
	return expertWork{flops: flops, bytes: bytes, fixedNs: x.routed.fixedNs}
}

// Imbalance reports the load-imbalance factor the roofline applies to a
// step of tokens tokens (1 without expert parallelism).
func (r *Roofline) Imbalance(tokens int) float64 {
	if r.experts == nil || tokens == 0 {
		return 1
	}
	return r.experts.imbalance(float64(tokens))
}

// nonExpertFLOPsPerToken is 2·(active − k·ExpertParamsEach): a token's
// matmul work outside its routed experts.
func nonExpertFLOPsPerToken(m *llm.Model) float64 {
	return 2 * (m.ParamsActive - float64(m.ExpertsPerTok)*m.ExpertParamsEach())
}
