package llm

import (
	"slices"
	"sort"
	"strings"
)

// The formats a config.json gives its weights and KV cache.
//
// The activations' format, and so the KV cache's and that of every weight
// no quantization_config converts, is the config's dtype (torch_dtype in
// configs written before transformers 4.56): bfloat16 is bf16, float16
// fp16. A float32 config, or one without a dtype, is served at bf16: vLLM's
// dtype "auto" downcasts a float32 model to the platform's first supported
// dtype, bfloat16 on a GPU that has it (_resolve_auto_dtype in
// vllm/config/model.py), and takes a config without a dtype as float32.
//
// quantization_config.quant_method then sets the weights':
//
//	fp8, fbgemm_fp8     every weight fp8 (the few modules left in the
//	                    activations' format — lm_head, the routers — are
//	                    counted at fp8 too, under 0.5% of the bytes)
//	mxfp4               the routed experts mxfp4 (gpt-oss: attention,
//	                    routers and embeddings stay in the activations'
//	                    format); an MoE model only
//	modelopt            quant_algo FP8 or NVFP4: every weight; a
//	                    kv_cache_quant_algo FP8 makes the KV cache fp8
//	compressed-tensors  config_groups' weights: 8-bit float is fp8, 4-bit
//	                    float in groups of 16 is nvfp4 (every group alike);
//	                    a kv_cache_scheme of 8-bit floats makes the KV fp8
//
// Any other method (integer formats: gptq, awq, bitsandbytes, int4
// compressed-tensors) is refused, naming it.

// configDTypes maps a config's dtype to the format served.
var configDTypes = map[string]DType{"bfloat16": BF16, "float16": FP16, "half": FP16, "float32": BF16, "float": BF16}

// precision sets s's weight, expert and KV formats.
func (r *cfgReader) precision(c cfgObject, s *Spec) {
	act := r.activations(c)
	s.WeightDType, s.KVDType = act, act
	q, ok := r.object(c, "quantization_config")
	if r.err != nil || !ok {
		return
	}
	method := r.str(q, "quant_method")
	switch method {
	case "fp8", "fbgemm_fp8":
		s.WeightDType = FP8
	case "mxfp4":
		r.mxfp4(q, s)
	case "modelopt":
		r.modelopt(q, s)
	case "compressed-tensors":
		r.compressedTensors(q, s)
	default:
		r.failf(q.at("quant_method"), "%q is not a format handoff reads (it reads fp8, fbgemm_fp8, mxfp4, "+
			"modelopt FP8 and NVFP4, compressed-tensors 8-bit and 4-bit floats)", method)
	}
}

// activations is the format of the config's dtype.
func (r *cfgReader) activations(c cfgObject) DType {
	key := "dtype"
	if !c.has(key) {
		key = "torch_dtype"
	}
	name := r.str(c, key)
	if name == "" {
		return BF16
	}
	d, ok := configDTypes[name]
	if !ok {
		r.failf(key, "%q is not a dtype handoff reads (it reads %s)", name, strings.Join(sortedKeys(configDTypes), ", "))
	}
	return d
}

// mxfp4 sets the routed experts' format of an MXFP4 checkpoint.
func (r *cfgReader) mxfp4(q cfgObject, s *Spec) {
	if s.Experts == 0 {
		r.failf(q.at("quant_method"), "mxfp4 quantizes routed experts, and this model has none")
		return
	}
	s.ExpertDType = MXFP4
}

// modelopt sets the formats of a TensorRT Model Optimizer checkpoint.
func (r *cfgReader) modelopt(q cfgObject, s *Spec) {
	switch algo := r.str(q, "quant_algo"); algo {
	case "FP8":
		s.WeightDType = FP8
	case "NVFP4":
		s.WeightDType = NVFP4
	default:
		r.failf(q.at("quant_algo"), "%q: handoff reads modelopt's FP8 and NVFP4", algo)
	}
	switch kv := r.str(q, "kv_cache_quant_algo"); kv {
	case "":
	case "FP8":
		s.KVDType = FP8
	default:
		r.failf(q.at("kv_cache_quant_algo"), "%q: handoff reads FP8 (or none)", kv)
	}
}

// compressedTensors sets the formats of an llm-compressor checkpoint.
func (r *cfgReader) compressedTensors(q cfgObject, s *Spec) {
	groups, ok := r.object(q, "config_groups")
	if !ok {
		r.failf(q.at("config_groups"), "missing: a compressed-tensors config lists its schemes there")
		return
	}
	var formats []DType
	for _, name := range sortedKeys(groups.keys) {
		g, _ := r.object(groups, name)
		w, _ := r.object(g, "weights")
		formats = append(formats, r.floatScheme(w, true))
	}
	if r.err == nil && len(slices.Compact(formats)) > 1 {
		r.failf(groups.path, "groups of different formats (%v): handoff gives all weights but the experts one format", slices.Compact(formats))
	}
	if r.err == nil && len(formats) > 0 {
		s.WeightDType = formats[0]
	}
	if kv, ok := r.object(q, "kv_cache_scheme"); ok {
		if r.floatScheme(kv, false) == FP8 {
			s.KVDType = FP8
		}
	}
}

// floatScheme is the format of a compressed-tensors scheme: 8-bit floats
// fp8; 4-bit floats in groups of 16 nvfp4 (weights only).
func (r *cfgReader) floatScheme(o cfgObject, weights bool) DType {
	bits, typ := r.intReq(o, "num_bits"), r.str(o, "type")
	switch {
	case r.err != nil:
		return ""
	case typ != "float":
		r.failf(o.at("type"), "%q: handoff reads floating-point schemes (integer formats are not modelled)", typ)
	case bits == 8:
		return FP8
	case bits == 4 && weights && r.intOr(o, "group_size", 0) == 16:
		return NVFP4
	default:
		r.failf(o.at("num_bits"), "%d-bit floats: handoff reads 8-bit (fp8) and 4-bit in groups of 16 (nvfp4) weights, 8-bit KV", bits)
	}
	return ""
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
