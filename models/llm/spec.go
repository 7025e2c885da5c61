package llm

import (
	"math"
	"reflect"
	"strings"

	"handoff/models/strictyaml"
)

// Spec is a model as written in YAML (the embedded catalog or a scenario's
// inline model). Zero values of optional fields take defaults in Resolve:
// head_dim = hidden/heads, attention gqa, weight_dtype and kv_dtype bf16,
// expert_dtype = weight_dtype, params_active = params_total for dense
// models. The legacy weight_bytes and kv_bytes give a size per element
// instead of a dtype (not both); a size that is a dtype's (2, 1, 0.53125,
// 0.5625) takes that dtype's name, any other names none and computes as BF16.
type Spec struct {
	Name            string  `yaml:"name"`
	Layers          int     `yaml:"layers"`
	Hidden          int     `yaml:"hidden"`
	Heads           int     `yaml:"heads"`
	KVHeads         int     `yaml:"kv_heads"`
	HeadDim         int     `yaml:"head_dim,omitempty"`
	Intermediate    int     `yaml:"intermediate"` // FFN width; per expert for MoE
	Vocab           int     `yaml:"vocab"`
	ParamsTotal     float64 `yaml:"params_total"`
	ParamsActive    float64 `yaml:"params_active,omitempty"`
	Experts         int     `yaml:"experts,omitempty"`
	ExpertsPerToken int     `yaml:"experts_per_token,omitempty"`
	Attention       string  `yaml:"attention,omitempty"` // gqa | mla
	KVLoraRank      int     `yaml:"kv_lora_rank,omitempty"`
	RopeDim         int     `yaml:"rope_dim,omitempty"`
	SlidingWindow   int     `yaml:"sliding_window,omitempty"`
	SlidingLayers   int     `yaml:"sliding_layers,omitempty"`
	DenseLayers     int     `yaml:"dense_layers,omitempty"`   // leading dense-FFN layers of an MoE model
	SharedExperts   int     `yaml:"shared_experts,omitempty"` // per MoE layer
	WeightDType     DType   `yaml:"weight_dtype,omitempty"`   // all but the routed experts
	ExpertDType     DType   `yaml:"expert_dtype,omitempty"`   // routed experts
	KVDType         DType   `yaml:"kv_dtype,omitempty"`
	WeightBytes     float64 `yaml:"weight_bytes,omitempty"` // legacy: instead of weight_dtype
	KVBytes         float64 `yaml:"kv_bytes,omitempty"`     // legacy: instead of kv_dtype
	MaxContext      int     `yaml:"max_context"`
	Source          string  `yaml:"source,omitempty"`
	// Config names a Hugging Face config.json to read the entry from
	// (ReadHFConfig), in a scenario's catalog, which resolves the path:
	// the entry then sets name and source only (ConfigOnly).
	Config string `yaml:"config,omitempty"`
}

// ConfigOnly checks that an entry with Config sets no field the config
// file sets: every field but name, source and config is zero. The error
// names the first field set.
func (s Spec) ConfigOnly() error {
	v, t := reflect.ValueOf(s), reflect.TypeOf(s)
	for i := range t.NumField() {
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if key != "name" && key != "source" && key != "config" && !v.Field(i).IsZero() {
			return strictyaml.Fieldf(key, "the config file %s sets the model's shape: drop %s (a pool's precision "+
				"sets the formats it is served in)", s.Config, key)
		}
	}
	return nil
}

// Resolve applies defaults, validates s and returns the Model it describes,
// with its name lower-cased. Errors are *strictyaml.FieldError without a position
// (place them with strictyaml.Locate).
func (s Spec) Resolve() (*Model, error) {
	if s.Config != "" {
		return nil, strictyaml.Fieldf("config", "a config file is read where the catalog is loaded (a scenario's catalog)")
	}
	m := s.withDefaults()
	if err := s.resolvePrecision(m); err != nil {
		return nil, err
	}
	for _, check := range []func(*Model) error{checkShape, checkAttention, checkParams, checkExperts, checkMoE, checkSliding} {
		if err := check(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (s Spec) withDefaults() *Model {
	m := &Model{
		Name: strings.ToLower(strings.TrimSpace(s.Name)), Layers: s.Layers, Hidden: s.Hidden,
		Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Intermediate: s.Intermediate,
		Vocab: s.Vocab, ParamsTotal: s.ParamsTotal, ParamsActive: s.ParamsActive,
		Experts: s.Experts, ExpertsPerTok: s.ExpertsPerToken, Attention: strings.ToLower(s.Attention),
		KVLoraRank: s.KVLoraRank, RopeDim: s.RopeDim, SlidingWindow: s.SlidingWindow,
		SlidingLayers: s.SlidingLayers, DenseLayers: s.DenseLayers, SharedExperts: s.SharedExperts,
		MaxContext: s.MaxContext, Source: s.Source,
	}
	if m.HeadDim == 0 && m.Heads > 0 && m.Hidden%m.Heads == 0 {
		m.HeadDim = m.Hidden / m.Heads
	}
	if m.Attention == "" {
		m.Attention = AttentionGQA
	}
	if m.ParamsActive == 0 && m.Experts == 0 {
		m.ParamsActive = m.ParamsTotal
	}
	return m
}

// resolvePrecision sets m's dtypes and byte sizes from s's dtype fields or
// their legacy byte fields, refusing an unknown dtype and a dtype given
// beside its bytes.
func (s Spec) resolvePrecision(m *Model) error {
	var err error
	if m.WeightDType, m.WeightBytes, err = dtypeOrBytes("weight", s.WeightDType, s.WeightBytes); err != nil {
		return err
	}
	if m.KVDType, m.KVBytes, err = dtypeOrBytes("kv", s.KVDType, s.KVBytes); err != nil {
		return err
	}
	m.ExpertDType, m.ExpertWeightBytes = m.WeightDType, m.WeightBytes
	if s.ExpertDType != "" {
		if s.Experts == 0 {
			return strictyaml.Fieldf("expert_dtype", "only for an MoE model (set experts)")
		}
		if m.ExpertDType, err = ParseDType(string(s.ExpertDType)); err != nil {
			return strictyaml.Fieldf("expert_dtype", "%v", err)
		}
		m.ExpertWeightBytes = m.ExpertDType.Bytes()
	}
	return nil
}

// dtypeOrBytes resolves one precision given as prefix_dtype or the legacy
// prefix_bytes: the dtype and its size, bf16 when neither is set.
func dtypeOrBytes(prefix string, d DType, bytes float64) (DType, float64, error) {
	switch {
	case d != "" && bytes != 0:
		return "", 0, strictyaml.Fieldf(prefix+"_bytes", "set %s_dtype or %s_bytes, not both", prefix, prefix)
	case d != "":
		parsed, err := ParseDType(string(d))
		if err != nil {
			return "", 0, strictyaml.Fieldf(prefix+"_dtype", "%v", err)
		}
		return parsed, parsed.Bytes(), nil
	case bytes != 0:
		return dtypeOfBytes(bytes), bytes, nil
	}
	return BF16, BF16.Bytes(), nil
}

// checkShape requires a valid name and positive dimensions.
func checkShape(m *Model) error {
	if m.Name == "" || strings.ContainsAny(m.Name, " \t\n/") {
		return strictyaml.Fieldf("name", "want a non-empty name without spaces or '/', got %q", m.Name)
	}
	dims := []struct {
		field string
		v     int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"intermediate", m.Intermediate},
		{"vocab", m.Vocab}, {"max_context", m.MaxContext}}
	for _, d := range dims {
		if d.v <= 0 {
			return strictyaml.Fieldf(d.field, "must be positive, got %d", d.v)
		}
	}
	return checkLimits(m)
}

// maxDim bounds every dimension and count so that products of a few of them
// cannot overflow an int; real models are far below it.
const maxDim = 1 << 24

// maxContext bounds max_context and sliding_window, in tokens.
const maxContext = 1 << 31

// checkLimits rejects dimensions too large to be real, and sizes out of range.
func checkLimits(m *Model) error {
	limits := []struct {
		field  string
		v, max int
	}{{"layers", m.Layers, maxDim}, {"hidden", m.Hidden, maxDim}, {"heads", m.Heads, maxDim},
		{"kv_heads", m.KVHeads, maxDim}, {"head_dim", m.HeadDim, maxDim}, {"intermediate", m.Intermediate, maxDim},
		{"vocab", m.Vocab, maxDim}, {"experts", m.Experts, maxDim}, {"experts_per_token", m.ExpertsPerTok, maxDim},
		{"kv_lora_rank", m.KVLoraRank, maxDim}, {"rope_dim", m.RopeDim, maxDim},
		{"max_context", m.MaxContext, maxContext}, {"sliding_window", m.SlidingWindow, maxContext}}
	for _, l := range limits {
		if l.v > l.max {
			return strictyaml.Fieldf(l.field, "%d is larger than any real model (limit %d)", l.v, l.max)
		}
	}
	if m.HeadDim <= 0 {
		return strictyaml.Fieldf("head_dim", "must be positive (set it when hidden is not a multiple of heads)")
	}
	if !(m.WeightBytes > 0 && m.WeightBytes <= 8) {
		return strictyaml.Fieldf("weight_bytes", "must be in (0, 8], got %v", m.WeightBytes)
	}
	if !(m.KVBytes > 0 && m.KVBytes <= 8) {
		return strictyaml.Fieldf("kv_bytes", "must be in (0, 8], got %v", m.KVBytes)
	}
	return nil
}

// checkAttention validates the attention kind and its dimensions.
func checkAttention(m *Model) error {
	switch m.Attention {
	case AttentionGQA:
		if m.KVLoraRank != 0 || m.RopeDim != 0 {
			return strictyaml.Fieldf("kv_lora_rank", "only for attention: mla")
		}
	case AttentionMLA:
		if m.KVLoraRank <= 0 {
			return strictyaml.Fieldf("kv_lora_rank", "must be positive for attention: mla")
		}
		if m.RopeDim <= 0 {
			return strictyaml.Fieldf("rope_dim", "must be positive for attention: mla")
		}
	default:
		return strictyaml.Fieldf("attention", "want gqa or mla, got %q", m.Attention)
	}
	if m.KVHeads <= 0 {
		return strictyaml.Fieldf("kv_heads", "must be positive, got %d", m.KVHeads)
	}
	if m.Heads%m.KVHeads != 0 {
		return strictyaml.Fieldf("kv_heads", "heads (%d) must be a multiple of kv_heads (%d)", m.Heads, m.KVHeads)
	}
	return nil
}

// checkParams validates parameter counts.
func checkParams(m *Model) error {
	if !(m.ParamsTotal > 0) || math.IsInf(m.ParamsTotal, 0) {
		return strictyaml.Fieldf("params_total", "must be positive, got %v", m.ParamsTotal)
	}
	if !(m.ParamsActive > 0) {
		return strictyaml.Fieldf("params_active", "must be positive (required for MoE models), got %v", m.ParamsActive)
	}
	if m.ParamsActive > m.ParamsTotal {
		return strictyaml.Fieldf("params_active", "%v exceeds params_total %v", m.ParamsActive, m.ParamsTotal)
	}
	return nil
}

// checkExperts validates the MoE fields: a dense model has no experts and
// active = total; an MoE model routes each token to k < E experts and its
// shared parameters, derived from the totals, are not negative.
func checkExperts(m *Model) error {
	switch {
	case m.Experts < 0:
		return strictyaml.Fieldf("experts", "must not be negative")
	case m.Experts == 0 && m.ExpertsPerTok != 0:
		return strictyaml.Fieldf("experts_per_token", "set experts too (0 = dense)")
	case m.Experts == 0 && m.ParamsActive != m.ParamsTotal:
		return strictyaml.Fieldf("params_active", "a dense model (experts: 0) must have params_active = params_total")
	case m.Experts == 0:
		return nil
	case m.ExpertsPerTok < 1 || m.ExpertsPerTok >= m.Experts:
		return strictyaml.Fieldf("experts_per_token", "want 1 to experts-1 (%d), got %d", m.Experts-1, m.ExpertsPerTok)
	case m.SharedParams() < 0 || m.SharedParams() > m.ParamsActive:
		return strictyaml.Fieldf("params_active", "inconsistent with params_total, experts and experts_per_token: derived shared params %.4g out of [0, active]", m.SharedParams())
	}
	return nil
}

// checkMoE validates the fields only an MoE model has: dense_layers within
// layers (at least one MoE layer left) and shared_experts; resolvePrecision
// checks expert_dtype.
func checkMoE(m *Model) error {
	switch {
	case m.DenseLayers < 0 || m.DenseLayers > maxDim:
		return strictyaml.Fieldf("dense_layers", "must be in [0, layers), got %d", m.DenseLayers)
	case m.SharedExperts < 0 || m.SharedExperts > maxDim:
		return strictyaml.Fieldf("shared_experts", "must not be negative, got %d", m.SharedExperts)
	case m.Experts == 0 && m.DenseLayers != 0:
		return strictyaml.Fieldf("dense_layers", "only for an MoE model (set experts)")
	case m.Experts == 0 && m.SharedExperts != 0:
		return strictyaml.Fieldf("shared_experts", "only for an MoE model (set experts)")
	case m.DenseLayers >= m.Layers:
		return strictyaml.Fieldf("dense_layers", "%d leaves no MoE layer: want 0 to layers-1 (%d)", m.DenseLayers, m.Layers-1)
	}
	return nil
}

// checkSliding validates sliding-window attention.
func checkSliding(m *Model) error {
	switch {
	case m.SlidingWindow < 0:
		return strictyaml.Fieldf("sliding_window", "must not be negative")
	case m.SlidingLayers < 0 || m.SlidingLayers > m.Layers:
		return strictyaml.Fieldf("sliding_layers", "want 0 to layers (%d), got %d", m.Layers, m.SlidingLayers)
	case (m.SlidingLayers > 0) != (m.SlidingWindow > 0):
		return strictyaml.Fieldf("sliding_window", "set sliding_window and sliding_layers together")
	case m.SlidingLayers > 0 && m.SlidingLayers == m.Layers:
		return strictyaml.Fieldf("sliding_layers", "every layer slides: handoff models sliding-window layers beside "+
			"at least one full-attention layer")
	case m.KVGroups().Full > 1:
		// vLLM would give the full-attention layers several block tables;
		// the engine keeps one per sequence.
		return strictyaml.Fieldf("sliding_layers", "%d sliding-window layers beside %d full-attention ones: vLLM splits "+
			"the full layers into %d KV cache groups, which handoff does not model (it needs more than two thirds "+
			"as many sliding layers as full ones)", m.SlidingLayers, m.FullLayers(), m.KVGroups().Full)
	}
	return nil
}

// Spec returns the YAML form of m, with every field explicit.
func (m *Model) Spec() Spec {
	s := Spec{
		Name: m.Name, Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads,
		HeadDim: m.HeadDim, Intermediate: m.Intermediate, Vocab: m.Vocab,
		ParamsTotal: m.ParamsTotal, ParamsActive: m.ParamsActive, Experts: m.Experts,
		ExpertsPerToken: m.ExpertsPerTok, Attention: m.Attention, KVLoraRank: m.KVLoraRank,
		RopeDim: m.RopeDim, SlidingWindow: m.SlidingWindow, SlidingLayers: m.SlidingLayers,
		DenseLayers: m.DenseLayers, SharedExperts: m.SharedExperts,
		WeightDType: m.WeightDType, ExpertDType: m.ExpertDType, KVDType: m.KVDType,
		MaxContext: m.MaxContext, Source: m.Source,
	}
	if m.WeightDType == "" { // a size that names no dtype
		s.WeightBytes = m.WeightBytes
	}
	if m.KVDType == "" {
		s.KVBytes = m.KVBytes
	}
	if m.ExpertDType == m.WeightDType || m.Experts == 0 {
		s.ExpertDType = ""
	}
	return s
}
