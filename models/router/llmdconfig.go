package router

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"handoff/models/strictyaml"
)

// WeightedScorer is one scorer and its weight (≥ 0) in the total.
type WeightedScorer struct {
	Name   string  `yaml:"name"`
	Weight float64 `yaml:"weight"` // a scenario leaving it out weighs 1
}

// LLMDConfig is the llm-d scheduler's plugins: the router.llmd section of
// a scenario (YAML-tagged), its defaults (DefaultLLMDConfig) and checks
// (Check), and NewLLMD's configuration.
type LLMDConfig struct {
	Scorers []WeightedScorer `yaml:"scorers"`
	Picker  string           `yaml:"picker"` // max-score | weighted-random
	// NonCachedTokens: in a disaggregated cluster, prefill on a prefiller
	// iff the chosen decoder lacks at least this many prompt tokens;
	// 0 never disaggregates (every request prefills on its decoder).
	NonCachedTokens int `yaml:"non_cached_tokens"`
	// LRUCapacityPerServer bounds the prefix index, in blocks per
	// instance; 0 sizes each instance's LRU from its KV block count, as
	// llm-d's auto-tuned scorer does from the pod's cache_config metrics.
	LRUCapacityPerServer int `yaml:"lru_capacity_per_server"`
	// MediumWeights weigh a block the precise prefix scorer finds by the
	// medium holding it; nil (or a nil weight) is llm-d's
	// (DefaultMediumWeights).
	MediumWeights *MediumWeights `yaml:"medium_weights,omitempty"`
	// FlowControl queues requests in the gateway by priority band while
	// the pool is saturated (flowcontrol.go); nil or not enabled: none.
	FlowControl *FlowControl `yaml:"flow_control,omitempty"`
	// PrefixAffinity filters the candidates by their prefix share before
	// the scorers (llmdaffinity.go); nil: no filter.
	PrefixAffinity *PrefixAffinity `yaml:"prefix_affinity_filter,omitempty"`
	// NoHitLRUSize is how many instances the no-hit-LRU scorer's LRU
	// keeps (its lruSize parameter).
	NoHitLRUSize int `yaml:"no_hit_lru_size"`
	// TokenLoadThreshold is the in-flight tokens at which the token-load
	// scorer gives 0 (its queueThresholdTokens parameter).
	TokenLoadThreshold int `yaml:"token_load_threshold"`
	// ContextLengthFilter drops, before scoring, the candidates whose
	// pool's context_length_range does not hold the request's prompt
	// (the context-length-aware plugin's enableFiltering; llmdcontext.go);
	// a request no candidate of a leg may take is rejected.
	ContextLengthFilter bool `yaml:"context_length_filter,omitempty"`
}

// MediumWeights are the precise prefix scorer's per-medium block weights,
// each in [0, 1]: gpu is HBM, cpu the host tier. llm-d's default table
// weighs gpu 1.0 and cpu 0.8 (llm-d-kv-cache, pkg/kvcache/backend.go,
// DefaultKVCacheBackendConfig); a medium missing from it counts 1.0
// (LongestPrefixScorer.getMaxWeight), so disk and store blocks weigh 1.0
// unless set.
type MediumWeights struct {
	GPU   *float64 `yaml:"gpu"`
	CPU   *float64 `yaml:"cpu"`
	Disk  *float64 `yaml:"disk"`
	Store *float64 `yaml:"store"`
}

// mediumWeights are the resolved weights.
type mediumWeights struct{ gpu, cpu, disk, store float64 }

// DefaultMediumWeights returns llm-d's: gpu 1, cpu 0.8, others 1.
func DefaultMediumWeights() MediumWeights {
	return MediumWeights{GPU: ptr(1.0), CPU: ptr(0.8), Disk: ptr(1.0), Store: ptr(1.0)}
}

func ptr[T any](v T) *T { return &v }

// resolved returns the weights w sets over llm-d's.
func (w *MediumWeights) resolved() mediumWeights {
	def := DefaultMediumWeights()
	var out [4]float64
	for k, v := range w.fields() {
		if v == nil {
			v = def.fields()[k]
		}
		out[k] = *v
	}
	return mediumWeights{gpu: out[0], cpu: out[1], disk: out[2], store: out[3]}
}

// fields returns the weights in the order gpu, cpu, disk, store; a nil w
// has none set.
func (w *MediumWeights) fields() [4]*float64 {
	if w == nil {
		return [4]*float64{}
	}
	return [4]*float64{w.GPU, w.CPU, w.Disk, w.Store}
}

// DefaultLLMDConfig returns llm-d's defaults: queue 2,
// kv-cache-utilization 2, prefix-cache 3, max-score, no disaggregation,
// each instance's LRU as large as its KV pool, llm-d's medium weights,
// a no-hit LRU of 1,024 instances, a token-load threshold of 4,194,304.
func DefaultLLMDConfig() LLMDConfig {
	return LLMDConfig{Scorers: []WeightedScorer{{ScorerQueue, 2}, {ScorerKVUtilization, 2}, {ScorerPrefixCache, 3}},
		Picker: PickerMaxScore, NoHitLRUSize: DefaultNoHitLRUSize, TokenLoadThreshold: DefaultTokenLoadThreshold}
}

// maxLRUCapacity bounds lru_capacity_per_server and no_hit_lru_size;
// maxTokenLoadThreshold bounds token_load_threshold.
const (
	maxLRUCapacity        = 1 << 24
	maxTokenLoadThreshold = 1 << 40
)

// Check validates the section; errors name the field relative to it.
func (c *LLMDConfig) Check() error {
	if len(c.Scorers) == 0 {
		return strictyaml.Fieldf("scorers", "at least one scorer is required (known: %s)", strings.Join(ScorerNames(), ", "))
	}
	seen := map[string]bool{}
	for i, s := range c.Scorers {
		f := fmt.Sprintf("scorers[%d]", i)
		switch {
		case !slices.Contains(ScorerNames(), s.Name):
			return strictyaml.Fieldf(f+".name", "unknown scorer %q (known: %s)", s.Name, strings.Join(ScorerNames(), ", "))
		case seen[s.Name]:
			return strictyaml.Fieldf(f+".name", "scorer %q is listed twice", s.Name)
		case !weightOK(s.Weight):
			return strictyaml.Fieldf(f+".weight", "must be in [0, %g], got %g", MaxWeight, s.Weight)
		}
		seen[s.Name] = true
	}
	switch {
	case !slices.Contains(PickerNames(), c.Picker):
		return strictyaml.Fieldf("picker", "unknown picker %q (known: %s)", c.Picker, strings.Join(PickerNames(), ", "))
	case c.NonCachedTokens < 0:
		return strictyaml.Fieldf("non_cached_tokens", "must not be negative (0 = never disaggregate), got %d", c.NonCachedTokens)
	case c.LRUCapacityPerServer < 0 || c.LRUCapacityPerServer > maxLRUCapacity:
		return strictyaml.Fieldf("lru_capacity_per_server", "must be in [0, %d] blocks (0: each instance's KV pool), got %d",
			maxLRUCapacity, c.LRUCapacityPerServer)
	case c.NoHitLRUSize < 1 || c.NoHitLRUSize > maxLRUCapacity:
		return strictyaml.Fieldf("no_hit_lru_size", "must be in [1, %d] instances, got %d", maxLRUCapacity, c.NoHitLRUSize)
	case c.TokenLoadThreshold < 1 || c.TokenLoadThreshold > maxTokenLoadThreshold:
		return strictyaml.Fieldf("token_load_threshold", "must be in [1, %d] tokens, got %d", maxTokenLoadThreshold, c.TokenLoadThreshold)
	}
	for k, v := range c.MediumWeights.fields() {
		if v != nil && !(*v >= 0 && *v <= 1) {
			return strictyaml.Fieldf("medium_weights."+[...]string{"gpu", "cpu", "disk", "store"}[k], "must be in [0, 1], got %g", *v)
		}
	}
	if err := nested("prefix_affinity_filter", c.PrefixAffinity); err != nil {
		return err
	}
	return nested("flow_control", c.FlowControl)
}

// nested checks a subsection (nil: absent), its errors' fields placed
// under key.
func nested[T any, P interface {
	*T
	Check() error
}](key string, sub P) error {
	if sub == nil {
		return nil
	}
	var fe *strictyaml.FieldError
	err := sub.Check()
	if errors.As(err, &fe) {
		fe.Field = key + "." + fe.Field
	}
	return err
}
