package llm

import "fmt"

// The config.json readers of the MoE architectures, and of sliding-window
// layers.

// readExperts reads the routed experts: their count under expertsKey, the
// top-k under num_experts_per_tok, each one's width under interKey.
func readExperts(r *cfgReader, c cfgObject, sh *hfShape, s *Spec, expertsKey, interKey string) {
	readExpertsTopK(r, c, sh, s, expertsKey, "num_experts_per_tok", interKey)
}

// readExpertsTopK is readExperts with the top-k under topKKey.
func readExpertsTopK(r *cfgReader, c cfgObject, sh *hfShape, s *Spec, expertsKey, topKKey, interKey string) {
	f := &sh.ffn
	f.experts = r.intReq(c, expertsKey)
	f.topK = r.intReq(c, topKKey)
	f.expertInter = r.intReq(c, interKey)
	switch {
	case r.err != nil:
	case f.experts < 2:
		r.failf(expertsKey, "want at least 2 routed experts, got %d", f.experts)
	case f.topK < 1 || f.topK >= f.experts:
		r.failf(topKKey, "want 1 to %s-1 (%d), got %d", expertsKey, f.experts-1, f.topK)
	}
	s.Experts, s.ExpertsPerToken, s.Intermediate = f.experts, f.topK, f.expertInter
}

// readLeadingDense reads first_k_dense_replace — the leading layers whose
// FFN is dense, intermediate_size wide — and the shared experts
// (n_shared_experts, each as wide as a routed one), as DeepSeek's and
// GLM-4.5's configurations give them.
func readLeadingDense(r *cfgReader, c cfgObject, sh *hfShape, s *Spec) {
	f := &sh.ffn
	f.denseLayers = r.intOr(c, "first_k_dense_replace", 0)
	if r.err == nil && f.denseLayers >= sh.layers {
		r.failf("first_k_dense_replace", "%d leaves no MoE layer of %d", f.denseLayers, sh.layers)
	}
	if f.denseLayers > 0 {
		f.intermediate = r.intReq(c, "intermediate_size")
	}
	shared := r.intOr(c, "n_shared_experts", 0)
	f.sharedInter = shared * f.expertInter
	s.DenseLayers, s.SharedExperts = f.denseLayers, shared
}

// readMixtral reads MixtralForCausalLM: every layer MoE, intermediate_size
// per expert, no shared expert.
func readMixtral(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, false)
	readExperts(r, c, &sh, s, "num_local_experts", "intermediate_size")
	r.everyLayerWindow(c)
	return sh, s
}

// readQwen2MoE reads Qwen2MoeForCausalLM: q/k/v biases, one shared expert
// shared_expert_intermediate_size wide behind a sigmoid gate, dense layers
// by decoder_sparse_step and mlp_only_layers.
func readQwen2MoE(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, false)
	sh.attn.qkvBias = true
	readExperts(r, c, &sh, s, "num_experts", "moe_intermediate_size")
	readQwenSparse(r, c, &sh, s)
	f := &sh.ffn
	f.sharedInter = r.intOr(c, "shared_expert_intermediate_size", 0)
	f.sharedGate = f.sharedInter > 0
	switch {
	case r.err != nil || f.sharedInter == 0:
	case f.sharedInter%f.expertInter != 0:
		r.failf("shared_expert_intermediate_size", "%d is not a multiple of moe_intermediate_size %d: handoff counts "+
			"shared experts as wide as a routed one", f.sharedInter, f.expertInter)
	default:
		s.SharedExperts = f.sharedInter / f.expertInter
	}
	r.qwenWindows(c, s)
	return sh, s
}

// readQwen3MoE reads Qwen3MoeForCausalLM: Qwen3's attention, no shared
// expert.
func readQwen3MoE(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, true)
	bias := r.boolOr(c, "attention_bias", false)
	sh.attn.qkvBias, sh.attn.oBias, sh.attn.qkNorm = bias, bias, true
	readExperts(r, c, &sh, s, "num_experts", "moe_intermediate_size")
	readQwenSparse(r, c, &sh, s)
	r.qwenWindows(c, s)
	return sh, s
}

// readQwenSparse counts the Qwen-MoE layers with a dense FFN: layer i (from
// 0) is MoE when it is not in mlp_only_layers and (i+1) is a multiple of
// decoder_sparse_step (transformers' Qwen2MoeDecoderLayer). Dense layers
// are intermediate_size wide.
func readQwenSparse(r *cfgReader, c cfgObject, sh *hfShape, s *Spec) {
	step := r.intOr(c, "decoder_sparse_step", 1)
	only := r.ints(c, "mlp_only_layers")
	if r.err == nil && step == 0 {
		r.failf("decoder_sparse_step", "must be positive")
	}
	if r.err != nil {
		return
	}
	dense := map[int]bool{}
	for _, i := range only {
		dense[i] = i < sh.layers
	}
	for i := range sh.layers {
		if (i+1)%step != 0 {
			dense[i] = true
		}
	}
	for _, d := range dense {
		if d {
			sh.ffn.denseLayers++
		}
	}
	if sh.ffn.denseLayers == sh.layers {
		r.failf("mlp_only_layers", "every layer is dense: not an MoE model")
	}
	if sh.ffn.denseLayers > 0 {
		sh.ffn.intermediate = r.intReq(c, "intermediate_size")
	}
	s.DenseLayers = sh.ffn.denseLayers
}

// readDeepSeek reads DeepseekV2ForCausalLM and DeepseekV3ForCausalLM (and
// Kimi-K2, which is the V3 architecture): multi-head latent attention, a
// q LoRA when q_lora_rank is set (V2-Lite has none), leading dense layers,
// shared experts, and V3's score-correction bias (topk_method noaux_tc).
func readDeepSeek(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readMLA(r, c, &sh, s)
	readExperts(r, c, &sh, s, "n_routed_experts", "moe_intermediate_size")
	readLeadingDense(r, c, &sh, s)
	if freq := r.intOr(c, "moe_layer_freq", 1); r.err == nil && freq != 1 {
		r.failf("moe_layer_freq", "%d: handoff reads MoE models whose layers after the first dense ones are all MoE (1)", freq)
	}
	sh.ffn.routerBias = r.str(c, "topk_method") == "noaux_tc"
	return sh, s
}

// readMLA reads multi-head latent attention. handoff's MLA model has one
// head width for the no-rope query/key part and the value
// (qk_nope_head_dim = v_head_dim, as in every DeepSeek release).
func readMLA(r *cfgReader, c cfgObject, sh *hfShape, s *Spec) {
	m := &mlaShape{qLoraRank: r.intOr(c, "q_lora_rank", 0), kvLoraRank: r.intReq(c, "kv_lora_rank"),
		nope: r.intReq(c, "qk_nope_head_dim"), rope: r.intReq(c, "qk_rope_head_dim"), v: r.intReq(c, "v_head_dim")}
	sh.attn = attnShape{heads: r.intReq(c, "num_attention_heads"), kvHeads: 1, headDim: m.v, mla: m}
	if r.err == nil && m.nope != m.v {
		r.failf("v_head_dim", "%d differs from qk_nope_head_dim %d: handoff's MLA has one head width for both", m.v, m.nope)
	}
	s.Attention, s.Heads, s.KVHeads, s.HeadDim = AttentionMLA, sh.attn.heads, 1, m.v
	s.KVLoraRank, s.RopeDim = m.kvLoraRank, m.rope
}

// readGptOss reads GptOssForCausalLM: biases on every attention
// projection and an attention sink per head, a biased router, biased
// experts intermediate_size wide, sliding-window layers.
func readGptOss(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, true)
	bias := r.boolOr(c, "attention_bias", true)
	sh.attn.qkvBias, sh.attn.oBias, sh.attn.sinks = bias, bias, true
	topK := "num_experts_per_tok"
	if !c.has(topK) && c.has("experts_per_token") {
		topK = "experts_per_token" // the spelling of the first released configs
	}
	readExpertsTopK(r, c, &sh, s, "num_local_experts", topK, "intermediate_size")
	sh.ffn.expertBias, sh.ffn.routerBias = true, true
	sliding, ok := r.layerTypes(c, sh.layers)
	if !ok {
		sliding = (sh.layers + 1) / 2 // transformers' default: layer 0 sliding, then alternating
	}
	r.setWindow(c, s, sliding, "layer_types")
	return sh, s
}

// readGlm4MoE reads Glm4MoeForCausalLM (GLM-4.5, GLM-4.5-Air): q/k/v
// biases under attention_bias, q/k norms under use_qk_norm, leading dense
// layers, shared experts and a score-correction bias.
func readGlm4MoE(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, true)
	sh.attn.qkvBias = r.boolOr(c, "attention_bias", false)
	sh.attn.qkNorm = r.boolOr(c, "use_qk_norm", false)
	readExperts(r, c, &sh, s, "n_routed_experts", "moe_intermediate_size")
	readLeadingDense(r, c, &sh, s)
	sh.ffn.routerBias = true
	return sh, s
}

// qwenWindows reads the Qwen architectures' sliding windows: layer_types
// when the config has it, else with use_sliding_window set the layers from
// max_window_layers on (transformers' Qwen2Config).
func (r *cfgReader) qwenWindows(c cfgObject, s *Spec) {
	sliding, ok := r.layerTypes(c, s.Layers)
	if ok {
		r.setWindow(c, s, sliding, "layer_types")
		return
	}
	if r.boolOr(c, "use_sliding_window", false) {
		sliding = max(0, s.Layers-r.intReq(c, "max_window_layers"))
	}
	r.setWindow(c, s, sliding, "max_window_layers")
}

// layerTypes counts the sliding_attention entries of layer_types; ok false
// when the config has none.
func (r *cfgReader) layerTypes(c cfgObject, layers int) (sliding int, ok bool) {
	types := r.strings(c, "layer_types")
	if r.err != nil || types == nil {
		return 0, false
	}
	if len(types) != layers {
		r.failf("layer_types", "%d entries for num_hidden_layers %d", len(types), layers)
	}
	for i, t := range types {
		switch t {
		case "sliding_attention":
			sliding++
		case "full_attention":
		default:
			r.failf(fmt.Sprintf("layer_types[%d]", i), "%q: handoff reads full_attention and sliding_attention", t)
		}
	}
	return sliding, true
}

// setWindow sets the model's sliding layers and their window,
// sliding_window tokens (required with any sliding layer); key is the one
// that made them sliding.
func (r *cfgReader) setWindow(c cfgObject, s *Spec, sliding int, key string) {
	if r.err != nil || sliding == 0 {
		return
	}
	s.SlidingLayers, s.SlidingWindow = sliding, r.intReq(c, "sliding_window")
	switch {
	case r.err != nil:
	case s.SlidingWindow == 0:
		r.failf("sliding_window", "must be positive with %d sliding-window layers", sliding)
	case sliding == s.Layers:
		r.failf(key, "every layer slides: handoff models sliding-window layers beside full-attention ones")
	}
}
