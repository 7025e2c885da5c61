package llm

// The parameter count of a model read from its config.json, from the
// shapes of its weights as the architectures' Hugging Face modelling code
// creates them (transformers' models/<arch>/modeling_<arch>.py), with
// L layers, hidden size h, vocabulary V, H query heads and H_kv KV heads
// of width d:
//
//	embeddings   V·h, twice unless tie_word_embeddings (input and lm_head)
//	attention    per layer, GQA: h·H·d (q) + 2·h·H_kv·d (k, v) + H·d·h (o),
//	             plus H·d + 2·H_kv·d with q/k/v biases, h with an o bias,
//	             2·d with q/k norms (Qwen3, GLM with use_qk_norm) and H
//	             attention sinks (gpt-oss);
//	             MLA (DeepSeek-V2/V3, Kimi-K2), with q_lora_rank r_q,
//	             kv_lora_rank r_kv, qk_nope d_n, qk_rope d_r, v_head d_v:
//	             h·H·(d_n+d_r) for q without a LoRA, else h·r_q + r_q +
//	             r_q·H·(d_n+d_r); h·(r_kv+d_r) + r_kv (the latent and its
//	             norm); r_kv·H·(d_n+d_v); H·d_v·h (o)
//	norms        2·h per layer, h after the last
//	dense FFN    3·h·I per dense layer (gate, up, down), plus 2·I + h
//	             with biases
//	MoE layer    router h·E (+E with a bias: gpt-oss's, DeepSeek-V3's and
//	             GLM's score-correction bias); E experts of 3·h·I_e each
//	             (+2·I_e + h with gpt-oss's biases); shared experts
//	             3·h·I_s (I_s = n_shared·I_e, or Qwen2-MoE's
//	             shared_expert_intermediate_size, whose gate adds h)
//
// total = every term; active = every term but the routed experts, plus
// k of them per MoE layer. Both count the embeddings and lm_head, as the
// catalog's params_active does (a model card's "activated" figure often
// leaves the input embedding, or both, out). Layers a checkpoint holds
// but vLLM does not serve — DeepSeek-V3's and GLM-4.5's multi-token
// prediction layer (num_nextn_predict_layers) — are not counted.

// hfShape is what the parameter count needs of a config.
type hfShape struct {
	layers, hidden, vocab int
	tied                  bool
	attn                  attnShape
	ffn                   ffnShape
}

// attnShape is one layer's attention.
type attnShape struct {
	heads, kvHeads, headDim int
	qkvBias, oBias, qkNorm  bool
	sinks                   bool
	mla                     *mlaShape // nil: GQA
}

// mlaShape is multi-head latent attention's widths.
type mlaShape struct {
	qLoraRank, kvLoraRank, nope, rope, v int
}

// ffnShape is the feed-forward networks: dense layers of width
// intermediate, and (experts > 0) MoE layers.
type ffnShape struct {
	intermediate int  // a dense layer's width
	mlpBias      bool // dense layers' biases (Llama's mlp_bias)
	denseLayers  int  // layers with a dense FFN in an MoE model, wherever they lie
	experts      int
	topK         int
	expertInter  int
	expertBias   bool // per-expert biases (gpt-oss)
	routerBias   bool // a router bias or a score-correction bias, E wide
	sharedInter  int  // the shared experts' width together; 0 = none
	sharedGate   bool // Qwen2-MoE's sigmoid gate on the shared expert
}

// params returns the total and the active parameter count.
func (s hfShape) params() (total, active float64) {
	h := float64(s.hidden)
	embed := float64(s.vocab) * h
	if !s.tied {
		embed *= 2
	}
	perLayer := s.attn.params(h) + 2*h
	shared := embed + float64(s.layers)*perLayer + h
	f := s.ffn
	if f.experts == 0 {
		total = shared + float64(s.layers)*f.denseParams(h)
		return total, total
	}
	moeLayers := float64(s.layers - f.denseLayers)
	shared += float64(f.denseLayers)*f.denseParams(h) + moeLayers*f.moeSharedParams(h)
	expert := f.expertParams(h)
	return shared + moeLayers*float64(f.experts)*expert, shared + moeLayers*float64(f.topK)*expert
}

// params is one layer's attention parameters.
func (a attnShape) params(h float64) float64 {
	if a.mla != nil {
		return a.mla.params(h, float64(a.heads))
	}
	q, kv := float64(a.heads*a.headDim), float64(a.kvHeads*a.headDim)
	n := h*q + 2*h*kv + q*h
	if a.qkvBias {
		n += q + 2*kv
	}
	if a.oBias {
		n += h
	}
	if a.qkNorm {
		n += 2 * float64(a.headDim)
	}
	if a.sinks {
		n += float64(a.heads)
	}
	return n
}

// params is one layer's MLA parameters with H heads.
func (m mlaShape) params(h, heads float64) float64 {
	qk := heads * float64(m.nope+m.rope)
	q := h * qk
	if m.qLoraRank > 0 {
		r := float64(m.qLoraRank)
		q = h*r + r + r*qk
	}
	r := float64(m.kvLoraRank)
	kvA := h*(r+float64(m.rope)) + r
	kvB := r * heads * float64(m.nope+m.v)
	return q + kvA + kvB + heads*float64(m.v)*h
}

// denseParams is one dense FFN layer's parameters.
func (f ffnShape) denseParams(h float64) float64 { return gatedFFNParams(h, f.intermediate, f.mlpBias) }

// expertParams is one routed expert's parameters in one layer.
func (f ffnShape) expertParams(h float64) float64 {
	return gatedFFNParams(h, f.expertInter, f.expertBias)
}

// gatedFFNParams is a gated FFN's parameters (gate, up and down
// projections) at hidden width h and intermediate width inter, with their
// biases if bias.
func gatedFFNParams(h float64, inter int, bias bool) float64 {
	i := float64(inter)
	n := 3 * h * i
	if bias {
		n += 2*i + h
	}
	return n
}

// moeSharedParams is what one MoE layer holds besides its routed experts:
// the router and the shared experts.
func (f ffnShape) moeSharedParams(h float64) float64 {
	e := float64(f.experts)
	n := h * e
	if f.routerBias {
		n += e
	}
	n += 3 * h * float64(f.sharedInter)
	if f.sharedGate {
		n += h
	}
	return n
}
