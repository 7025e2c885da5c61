// Package llm is the catalog of served model architectures and the figures
// derived from them: KV-cache bytes per token, weight bytes, and FLOPs per
// token. The catalog is embedded YAML; scenarios may add models, written
// out or read from a Hugging Face config.json (ReadHFConfig).
package llm

import (
	"fmt"
	"strconv"
	"strings"
)

// Attention kinds, as a catalog entry's attention field takes them.
// AttentionGQA covers multi-head (kv_heads = heads) and multi-query
// (kv_heads = 1) attention too: the figures follow from kv_heads alone;
// AttentionKind names which it is.
const (
	AttentionGQA = "gqa" // grouped-query, or MHA / MQA by kv_heads
	AttentionMLA = "mla" // DeepSeek multi-head latent attention
)

// AttentionKind names the model's attention for people: "mla", or by its
// KV heads "mha" (one per query head), "mqa" (one shared) or "gqa".
func (m *Model) AttentionKind() string {
	switch {
	case m.Attention == AttentionMLA:
		return "mla"
	case m.KVHeads == m.Heads:
		return "mha"
	case m.KVHeads == 1:
		return "mqa"
	}
	return "gqa"
}

// Model is one served LLM architecture.
type Model struct {
	Name              string
	Layers            int
	Hidden            int
	Heads             int
	KVHeads           int
	HeadDim           int
	Intermediate      int
	Vocab             int
	ParamsTotal       float64 // parameter count (all experts)
	ParamsActive      float64 // parameters touched per token (MoE: shared + top-k experts)
	Experts           int     // routed experts per MoE layer; 0 = dense
	ExpertsPerTok     int     // top-k
	Attention         string  // AttentionGQA or AttentionMLA
	KVLoraRank        int     // MLA latent width
	RopeDim           int     // MLA decoupled rope width
	SlidingWindow     int     // tokens kept by sliding-window layers; 0 = none
	SlidingLayers     int     // how many layers use the sliding window
	DenseLayers       int     // leading layers with a dense FFN in an MoE model (first_k_dense_replace)
	SharedExperts     int     // shared experts per MoE layer, each intermediate wide (n_shared_experts)
	WeightDType       DType   // every weight but the routed experts'; "" = WeightBytes names no format
	ExpertDType       DType   // routed experts' weights
	KVDType           DType   // KV cache elements
	WeightBytes       float64 // bytes per weight, WeightDType.Bytes() (2 = BF16)
	ExpertWeightBytes float64 // bytes per routed-expert weight, ExpertDType.Bytes(); 0 = WeightBytes
	KVBytes           float64 // bytes per KV element, KVDType.Bytes() (2 = BF16)
	MaxContext        int     // longest context the model supports, tokens
	Source            string
}

// KVBytesPerToken is the KV-cache size of one token across all layers, in
// bytes. GQA: 2·layers·kv_heads·head_dim·kv_bytes (K and V). MLA: one latent
// per layer, layers·(kv_lora_rank + rope_dim)·kv_bytes. Sliding-window layers
// are counted as full here, an upper bound; KVBytesHeld and
// KVBytesForContext cap them (hybrid.go).
// Example: Llama-3.1-70B, 2·80·8·128·2 = 327680 B.
func (m *Model) KVBytesPerToken() float64 {
	return float64(m.Layers) * m.kvPerLayerToken(m.KVHeads)
}

// kvPerLayerToken is the KV bytes of one token in one layer holding kvHeads
// heads (GQA) or the whole latent (MLA).
func (m *Model) kvPerLayerToken(kvHeads int) float64 {
	if m.Attention == AttentionMLA {
		return float64(m.KVLoraRank+m.RopeDim) * m.KVBytes
	}
	return 2 * float64(kvHeads*m.HeadDim) * m.KVBytes
}

// KVBytesPerTokenPerShard is the KV bytes one tensor-parallel rank holds per
// token at tensor-parallel degree tp. GQA: KV heads are split across ranks
// and replicated when tp > kv_heads, so each rank holds ceil(kv_heads/tp)
// heads: 2·layers·ceil(kv_heads/tp)·head_dim·kv_bytes. MLA: the latent is
// replicated, so each rank holds the full KVBytesPerToken. Sliding layers are
// counted as full. It panics if tp < 1.
func (m *Model) KVBytesPerTokenPerShard(tp int) float64 {
	if tp < 1 {
		panic("llm: tensor-parallel degree < 1")
	}
	perRank := (m.KVHeads + tp - 1) / tp
	return float64(m.Layers) * m.kvPerLayerToken(perRank)
}

// KVBytesForContext is the KV bytes one sequence of contextTokens tokens
// holds across all layers and all tensor-parallel ranks, with sliding-window
// layers capped at the window: full layers hold every token, sliding layers
// at most SlidingWindow. Example: gpt-oss-120b (2·8·64·2 = 2048 B per token
// per layer) at 1000 tokens: 18·1000·2048 + 18·128·2048 = 41582592 B.
func (m *Model) KVBytesForContext(contextTokens int) float64 {
	sliding := min(contextTokens, m.SlidingWindow)
	if m.SlidingLayers == 0 {
		sliding = 0
	}
	full := m.Layers - m.SlidingLayers
	perLayer := m.kvPerLayerToken(m.KVHeads)
	return perLayer * (float64(full)*float64(contextTokens) + float64(m.SlidingLayers)*float64(sliding))
}

// WeightBytesTotal is the size of all weights in bytes, SharedBytesTotal +
// ExpertBytesTotal: shared_params·weight_bytes + expert_params·
// expert_weight_bytes, params_total·weight_bytes for a dense model.
// Examples: Llama-3.1-70B, 70.6e9·2 = 141.2 GB; gpt-oss-120b (BF16
// attention and embeddings, MXFP4 experts) 2.12e9·2 + 114.71e9·0.53125 ≈
// 65.17 GB.
func (m *Model) WeightBytesTotal() float64 { return m.SharedBytesTotal() + m.ExpertBytesTotal() }

// SharedBytesTotal is the size of the weights every token touches,
// SharedParams·weight_bytes, in bytes.
func (m *Model) SharedBytesTotal() float64 { return m.SharedParams() * m.WeightBytes }

// ExpertBytesTotal is the size of the routed experts' weights,
// ExpertParams·expert_weight_bytes, in bytes; 0 for a dense model. A Model
// built without ExpertWeightBytes stores its experts at WeightBytes.
func (m *Model) ExpertBytesTotal() float64 {
	b := m.ExpertWeightBytes
	if b == 0 {
		b = m.WeightBytes
	}
	return m.ExpertParams() * b
}

// MoELayers is how many layers route their FFN to experts, layers −
// dense_layers for an MoE model; 0 for a dense one.
func (m *Model) MoELayers() int {
	if m.Experts == 0 {
		return 0
	}
	return m.Layers - m.DenseLayers
}

// WithPrecision returns a copy of m with each non-empty dtype applied, and
// the byte sizes that follow from it: weights to every weight but the routed
// experts', experts to the routed experts', kv to the KV cache. A pool that
// serves a model at another precision than the catalog's uses it. The
// dtypes must be known (ParseDType them first); it panics on any other.
func (m *Model) WithPrecision(weights, experts, kv DType) *Model {
	for _, d := range []DType{weights, experts, kv} {
		if d != "" && d.Bytes() == 0 {
			panic("llm: WithPrecision with unknown dtype " + string(d))
		}
	}
	cp := *m
	if weights != "" {
		cp.WeightDType, cp.WeightBytes = weights, weights.Bytes()
	}
	if experts != "" {
		cp.ExpertDType, cp.ExpertWeightBytes = experts, experts.Bytes()
	}
	if kv != "" {
		cp.KVDType, cp.KVBytes = kv, kv.Bytes()
	}
	return &cp
}

// FLOPsPerToken is the dense matmul work of one token through the model,
// 2·params_active FLOPs (one multiply and one add per active weight). It
// counts the embedding table like a matmul, a small overestimate, and leaves
// attention over the context to AttnFLOPsPerPair.
func (m *Model) FLOPsPerToken() float64 { return 2 * m.ParamsActive }

// AttnFLOPsPerPair is the attention work per (query token, key token) pair,
// in FLOPs, summed over layers and heads. GQA: 4·layers·heads·head_dim
// (2·head_dim for QKᵀ plus 2·head_dim for AV). MLA, computed in the
// expanded form: 2·layers·heads·(head_dim + rope_dim) for QKᵀ plus
// 2·layers·heads·head_dim for AV.
func (m *Model) AttnFLOPsPerPair() float64 {
	perHead := 4 * m.HeadDim
	if m.Attention == AttentionMLA {
		perHead = 2*(m.HeadDim+m.RopeDim) + 2*m.HeadDim
	}
	return float64(m.Layers) * float64(m.Heads) * float64(perHead)
}

// paramsPerExpert is the size of one routed expert summed over layers:
// total = shared + E·p and active = shared + k·p give p = (total−active)/(E−k).
func (m *Model) paramsPerExpert() float64 {
	if m.Experts == 0 || m.Experts == m.ExpertsPerTok {
		return 0
	}
	return (m.ParamsTotal - m.ParamsActive) / float64(m.Experts-m.ExpertsPerTok)
}

// ExpertParams is the parameter count in routed experts, derived from the
// totals: E·(total−active)/(E−k) for E experts and top-k routing; 0 for a
// dense model. Example: Mixtral-8x7B, 8·(46.7e9−12.9e9)/6 ≈ 45.07e9.
func (m *Model) ExpertParams() float64 { return float64(m.Experts) * m.paramsPerExpert() }

// SharedParams is the parameter count every token touches (attention,
// embeddings, norms, router, shared experts): params_total − ExpertParams;
// params_total for a dense model.
func (m *Model) SharedParams() float64 { return m.ParamsTotal - m.ExpertParams() }

// ExpertParamsEach is the parameter count of one routed expert summed over
// layers, (total−active)/(E−k); 0 for a dense model.
func (m *Model) ExpertParamsEach() float64 { return m.paramsPerExpert() }

// CheckTP reports whether the model can be sharded over tp tensor-parallel
// ranks the way vLLM shards it: the attention heads split evenly
// (ModelConfig.verify_with_parallel_config in vllm/config/model.py), and
// the KV heads either split evenly (kv_heads divisible by tp) or, when tp ≥
// kv_heads, are each replicated on tp/kv_heads ranks (tp divisible by
// kv_heads; QKVParallelLinear in vllm/model_executor/layers/linear.py). An
// MLA model's latent is replicated on every rank (kv_heads 1), so only the
// heads rule binds: vLLM's MLA decode backends refuse no per-rank head count
// that divides evenly. CUTLASS MLA (Blackwell) pads each rank's query heads
// up to 128 (q_pad_num_heads = MAX_HEADS in
// vllm/v1/attention/backends/mla/cutlass_mla.py, asserting only H <= 128),
// and FlashMLA runs the decode as MQA over however many heads a rank holds
// (vllm/v1/attention/backends/mla/flashmla.py), so DeepSeek-V3's 128 heads
// shard down to one per rank. The padding costs compute at small head
// counts; CheckTP does not model it. It panics if tp < 1.
func (m *Model) CheckTP(tp int) error {
	if tp < 1 {
		panic("llm: tensor-parallel degree < 1")
	}
	switch {
	case m.Heads%tp != 0:
		return fmt.Errorf("%s's %d attention heads do not split evenly over %d ranks "+
			"(vLLM requires heads divisible by tp; legal tp: %s)", m.Name, m.Heads, tp, joinInts(m.LegalTPs(m.Heads)))
	case !m.kvHeadsFit(tp):
		return fmt.Errorf("%s's %d KV heads neither split evenly over %d ranks nor replicate evenly on them "+
			"(vLLM requires kv_heads divisible by tp, or tp divisible by kv_heads; legal tp: %s)",
			m.Name, m.KVHeads, tp, joinInts(m.LegalTPs(m.Heads)))
	}
	return nil
}

// kvHeadsFit is CheckTP's KV-head rule.
func (m *Model) kvHeadsFit(tp int) bool {
	if tp < m.KVHeads {
		return m.KVHeads%tp == 0
	}
	return tp%m.KVHeads == 0
}

// LegalTPs returns the tensor-parallel degrees from 1 to max that CheckTP
// accepts, in order; none exceeds the head count, so LegalTPs(m.Heads)
// lists them all.
func (m *Model) LegalTPs(max int) []int {
	var out []int
	for tp := 1; tp <= max; tp++ {
		if m.Heads%tp == 0 && m.kvHeadsFit(tp) {
			out = append(out, tp)
		}
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
