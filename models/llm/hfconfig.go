package llm

import (
	"errors"
	"fmt"
	"strings"

	"handoff/models/strictyaml"
)

// A model read from a Hugging Face config.json, offline: the user supplies
// the file, nothing is downloaded. ReadHFConfig takes the architecture from
// the config's "architectures" field, reads the keys that architecture's
// transformers configuration defines (a key it requires and the file lacks
// is an error naming it; keys with a documented default take it), counts
// the parameters from the shapes (hfparams.go) and the formats from
// dtype / torch_dtype and quantization_config (hfquant.go), and returns
// the catalog entry it makes, which Resolve validates like any other.

// hfArchitecture is an architecture ReadHFConfig reads.
type hfArchitecture struct {
	name string
	read func(r *cfgReader, c cfgObject) (hfShape, *Spec)
}

// hfArchitectures is the registry of readable architectures, in the order
// an error lists them. DeepSeek-V3's reader also reads Kimi-K2 (model_type
// kimi_k2, the same architecture) and GLM-4.5's its Air variant.
var hfArchitectures = []hfArchitecture{
	{"LlamaForCausalLM", readLlama},
	{"MistralForCausalLM", readMistral},
	{"Qwen2ForCausalLM", readQwen2},
	{"Qwen3ForCausalLM", readQwen3},
	{"MixtralForCausalLM", readMixtral},
	{"Qwen2MoeForCausalLM", readQwen2MoE},
	{"Qwen3MoeForCausalLM", readQwen3MoE},
	{"DeepseekV2ForCausalLM", readDeepSeek},
	{"DeepseekV3ForCausalLM", readDeepSeek},
	{"GptOssForCausalLM", readGptOss},
	{"Glm4MoeForCausalLM", readGlm4MoE},
}

// HFArchitectures returns the architectures ReadHFConfig reads, in
// registry order.
func HFArchitectures() []string {
	out := make([]string, len(hfArchitectures))
	for i, a := range hfArchitectures {
		out[i] = a.name
	}
	return out
}

// ReadHFConfig reads the Hugging Face config.json data (file names it in
// errors) as the catalog entry named name. Errors are *ConfigError naming
// the file and the JSON path: an architecture not in HFArchitectures is
// refused by its "architectures" value; a required key that is missing,
// or a value of the wrong type or out of range, names that key. The entry
// is validated as Spec.Resolve validates a catalog entry; a value it
// refuses is reported as the catalog field the config's keys made.
func ReadHFConfig(data []byte, file, name string) (*Model, error) {
	s, err := readHFSpec(data, file, name)
	if err != nil {
		return nil, err
	}
	m, err := s.Resolve()
	var fe *strictyaml.FieldError
	if errors.As(err, &fe) {
		return nil, &ConfigError{File: file, Msg: fmt.Sprintf("read as a catalog entry, its %s: %s", fe.Field, fe.Msg)}
	}
	return m, err
}

// readHFSpec reads the config as a catalog entry, unvalidated.
func readHFSpec(data []byte, file, name string) (Spec, error) {
	r := &cfgReader{file: file}
	c := r.parseObject(data)
	arch := r.architecture(c)
	if r.err != nil {
		return Spec{}, r.err
	}
	shape, s := arch.read(r, c)
	if r.err == nil {
		r.precision(c, s)
	}
	if r.err != nil {
		return Spec{}, r.err
	}
	s.Name = name
	s.ParamsTotal, s.ParamsActive = shape.params()
	s.Source = fmt.Sprintf("%s (%s; parameters counted from its shapes)", file, arch.name)
	return *s, nil
}

// architecture finds the reader of the config's architectures[0].
func (r *cfgReader) architecture(c cfgObject) hfArchitecture {
	names := r.strings(c, "architectures")
	if r.err != nil {
		return hfArchitecture{}
	}
	if len(names) == 0 {
		r.failf("architectures", "missing: a config.json names its model class there (e.g. [\"LlamaForCausalLM\"])")
		return hfArchitecture{}
	}
	for _, a := range hfArchitectures {
		if a.name == names[0] {
			return a
		}
	}
	r.failf("architectures", "%q is not an architecture handoff reads (it reads %s)",
		names[0], strings.Join(HFArchitectures(), ", "))
	return hfArchitecture{}
}

// readBase reads what every architecture has: the layer count, widths,
// vocabulary and context, and whether the embeddings are tied (false by
// default, as in every registered architecture's configuration class).
func readBase(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh := hfShape{layers: r.intReq(c, "num_hidden_layers"), hidden: r.intReq(c, "hidden_size"),
		vocab: r.intReq(c, "vocab_size"), tied: r.boolOr(c, "tie_word_embeddings", false)}
	s := &Spec{Layers: sh.layers, Hidden: sh.hidden, Vocab: sh.vocab,
		MaxContext: r.intReq(c, "max_position_embeddings")}
	if r.err == nil && sh.layers == 0 {
		r.failf("num_hidden_layers", "must be positive")
	}
	return sh, s
}

// readGQA reads grouped-query attention: num_key_value_heads defaults to
// the head count (multi-head attention, as transformers defaults it), and
// head_dim to hidden / heads unless headDimRequired (architectures whose
// head width is not that: Qwen3, gpt-oss, GLM-4.5).
func readGQA(r *cfgReader, c cfgObject, sh *hfShape, s *Spec, headDimRequired bool) {
	a := &sh.attn
	a.heads = r.intReq(c, "num_attention_heads")
	a.kvHeads = r.intOr(c, "num_key_value_heads", a.heads)
	switch {
	case r.err != nil:
		return
	case a.heads == 0:
		r.failf("num_attention_heads", "must be positive")
	case headDimRequired || c.has("head_dim"):
		a.headDim = r.intReq(c, "head_dim")
	case sh.hidden%a.heads != 0:
		r.failf("head_dim", "missing, and hidden_size %d is not a multiple of num_attention_heads %d", sh.hidden, a.heads)
	default:
		a.headDim = sh.hidden / a.heads
	}
	s.Heads, s.KVHeads, s.HeadDim = a.heads, a.kvHeads, a.headDim
}

// readDenseFFN reads a dense model's FFN width.
func readDenseFFN(r *cfgReader, c cfgObject, sh *hfShape, s *Spec) {
	sh.ffn.intermediate = r.intReq(c, "intermediate_size")
	s.Intermediate = sh.ffn.intermediate
}

// readLlama reads LlamaForCausalLM: optional attention and MLP biases.
func readLlama(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, false)
	bias := r.boolOr(c, "attention_bias", false)
	sh.attn.qkvBias, sh.attn.oBias = bias, bias
	sh.ffn.mlpBias = r.boolOr(c, "mlp_bias", false)
	readDenseFFN(r, c, &sh, s)
	return sh, s
}

// readMistral reads MistralForCausalLM, whose sliding_window (when set)
// applies to every layer.
func readMistral(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, false)
	readDenseFFN(r, c, &sh, s)
	r.everyLayerWindow(c)
	return sh, s
}

// everyLayerWindow refuses a sliding window that every layer applies
// (Mistral's and Mixtral's sliding_window): handoff models sliding-window
// layers only beside full-attention ones.
func (r *cfgReader) everyLayerWindow(c cfgObject) {
	if w := r.intOr(c, "sliding_window", 0); r.err == nil && w > 0 {
		r.failf("sliding_window", "%d: every layer attends to a window of that many tokens, which handoff does not "+
			"model (it models sliding-window layers beside full-attention ones)", w)
	}
}

// readQwen2 reads Qwen2ForCausalLM: biases on q, k and v (fixed in its
// modelling code, no config key), and sliding windows when
// use_sliding_window is set.
func readQwen2(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, false)
	sh.attn.qkvBias = true
	readDenseFFN(r, c, &sh, s)
	r.qwenWindows(c, s)
	return sh, s
}

// readQwen3 reads Qwen3ForCausalLM: q/k norms, an optional attention bias,
// head_dim required.
func readQwen3(r *cfgReader, c cfgObject) (hfShape, *Spec) {
	sh, s := readBase(r, c)
	readGQA(r, c, &sh, s, true)
	bias := r.boolOr(c, "attention_bias", false)
	sh.attn.qkvBias, sh.attn.oBias, sh.attn.qkNorm = bias, bias, true
	readDenseFFN(r, c, &sh, s)
	r.qwenWindows(c, s)
	return sh, s
}
