package router

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"handoff/models/strictyaml"
)

// llm-d's EndpointPickerConfig (llm-d-inference-scheduler's config
// loader: apiVersion llm-d.ai/v1alpha1, earlier
// inference.networking.x-k8s.io/v1alpha1; plugins, each a type, an
// optional name (the type by default) and parameters; scheduling profiles
// naming plugins by pluginRef, scorers with a weight). ReadEPP maps what
// handoff models into an LLMDConfig and refuses the rest by name.

// eppDoc is the part of an EndpointPickerConfig handoff reads; any other
// top-level key is refused by the strict decoder.
type eppDoc struct {
	APIVersion         string       `yaml:"apiVersion"`
	Kind               string       `yaml:"kind"`
	Plugins            []eppPlugin  `yaml:"plugins"`
	SchedulingProfiles []eppProfile `yaml:"schedulingProfiles"`
	DataLayer          yaml.Node    `yaml:"dataLayer"` // where metrics and KV events come from: nothing to model
}

type eppPlugin struct {
	Type       string    `yaml:"type"`
	Name       string    `yaml:"name"`
	Parameters yaml.Node `yaml:"parameters"`
}

type eppProfile struct {
	Name    string   `yaml:"name"`
	Plugins []eppRef `yaml:"plugins"`
}

type eppRef struct {
	PluginRef string   `yaml:"pluginRef"`
	Weight    *float64 `yaml:"weight"`
}

// eppKind is what a plugin type is to handoff.
type eppKind int

const (
	eppScorer   eppKind = iota
	eppPicker           // chooses among the scored candidates
	eppFilter           // the role split, which handoff's legs make
	eppAffinity         // the prefix-cache-affinity filter
	eppHandler          // profile handler: which profiles run
	eppDecider          // prefix-based P/D decision
	eppPlumbing         // feeds metrics, KV events or tokens: handoff reads them exactly
)

// eppType is one plugin type handoff models: what it is, the handoff name
// it maps to (a scorer or picker) and the parameters it reads; anyParams
// accepts every parameter, for a plugin whose parameters configure how it
// learns what handoff's instances report exactly (tokenizers, KV-event
// subscriptions, metric sources).
type eppType struct {
	kind      eppKind
	maps      string
	params    []string
	anyParams bool
}

// eppTypes are the plugin types handoff models, by llm-d's type name.
var eppTypes = map[string]eppType{
	"prefix-cache-scorer": {kind: eppScorer, maps: ScorerPrefixCache, params: []string{"lruCapacityPerServer", "maxPrefixBlocksToMatch"}},
	// The precise scorer's parameters configure its tokenizer and KV-event
	// indexer: handoff reads the instances' caches exactly.
	"precise-prefix-cache-scorer":  {kind: eppScorer, maps: ScorerPrecisePrefix, anyParams: true},
	"kv-cache-utilization-scorer":  {kind: eppScorer, maps: ScorerKVUtilization},
	"queue-scorer":                 {kind: eppScorer, maps: ScorerQueue},
	"load-aware-scorer":            {kind: eppScorer, maps: ScorerLoadAware},
	"active-request-scorer":        {kind: eppScorer, maps: ScorerActiveRequest},
	"running-requests-size-scorer": {kind: eppScorer, maps: ScorerRunningRequests},
	"token-load-scorer":            {kind: eppScorer, maps: ScorerTokenLoad, params: []string{"queueThresholdTokens"}},
	"no-hit-lru-scorer":            {kind: eppScorer, maps: ScorerNoHitLRU, params: []string{"lruSize"}},
	"session-affinity-scorer":      {kind: eppScorer, maps: ScorerSessionAffinity},
	// Its label names the pods' label holding their range: handoff reads
	// each pool's context_length_range instead, whatever the key.
	"context-length-aware":         {kind: eppScorer, maps: ScorerContextLength, params: []string{"label", "enableFiltering"}},
	"max-score-picker":             {kind: eppPicker, maps: PickerMaxScore},
	"weighted-random-picker":       {kind: eppPicker, maps: PickerWeightedRandom},
	"prefix-cache-affinity-filter": {kind: eppAffinity, params: []string{"affinityThreshold", "explorationProbability"}},
	"decode-filter":                {kind: eppFilter},
	"prefill-filter":               {kind: eppFilter},
	"single-profile-handler":       {kind: eppHandler},
	"disagg-profile-handler":       {kind: eppHandler, params: []string{"deciders"}},
	"prefix-based-pd-decider":      {kind: eppDecider, params: []string{"nonCachedTokens"}},
	"approx-prefix-cache-producer": {kind: eppPlumbing, params: []string{"lruCapacityPerServer", "maxPrefixBlocksToMatch"}},
	"token-producer":               {kind: eppPlumbing, anyParams: true},
	"tokenizer":                    {kind: eppPlumbing, anyParams: true},
	"endpoint-notification-source": {kind: eppPlumbing, anyParams: true},
	"metrics-data-source":          {kind: eppPlumbing, anyParams: true},
	"core-metrics-extractor":       {kind: eppPlumbing, anyParams: true},
}

// eppUnmodelled says why handoff refuses the llm-d plugin types it knows
// of but does not model.
var eppUnmodelled = map[string]string{
	"lora-affinity-scorer":     "handoff models no LoRA adapters",
	"latency-scorer":           "it reads a latency predictor handoff does not model",
	"slo-headroom-tier-filter": "it reads a latency predictor handoff does not model",
	"random-picker":            "handoff models the max-score and weighted-random pickers",
	"always-disagg-pd-decider": "handoff models the prefix-based decider, which with nonCachedTokens 1 disaggregates every request with an uncached token",
}

// EPPPluginTypes returns the plugin types ReadEPP accepts, sorted.
func EPPPluginTypes() []string { return slices.Sorted(maps.Keys(eppTypes)) }

// eppReader holds what ReadEPP needs to place errors.
type eppReader struct {
	file   string
	root   *yaml.Node
	doc    eppDoc
	byName map[string]int // plugin name → index in doc.Plugins
	// threshold is each prefix decider's nonCachedTokens, by plugin name;
	// prefill the decider the disaggregation handler names ("": none, P/D
	// disabled, as llm-d's HandlerFactory logs).
	threshold map[string]int
	prefill   string
	affinity  map[string]PrefixAffinity // each prefix-affinity filter's parameters, by plugin name
	filtering map[string]bool           // each context-length-aware plugin's enableFiltering, by plugin name
}

// ReadEPP reads an llm-d EndpointPickerConfig (data, read from file) into
// an LLMDConfig: llm-d's defaults (DefaultLLMDConfig) with the scorers and
// weights, the picker, the prefix decider's nonCachedTokens and the LRU
// sizes the file sets. A plugin type, parameter or profile handoff does
// not model is one *strictyaml.FieldError naming the file, line and
// field.
func ReadEPP(data []byte, file string) (LLMDConfig, error) {
	e := &eppReader{file: file, byName: map[string]int{}, threshold: map[string]int{},
		affinity: map[string]PrefixAffinity{}, filtering: map[string]bool{}}
	root, err := strictyaml.Decode(data, file, &e.doc)
	if err != nil {
		return LLMDConfig{}, err
	}
	e.root = root
	cfg := DefaultLLMDConfig()
	if err := e.header(); err != nil {
		return cfg, err
	}
	if err := e.plugins(&cfg); err != nil {
		return cfg, err
	}
	cfg.NonCachedTokens = e.threshold[e.prefill]
	return cfg, e.profiles(&cfg)
}

func (e *eppReader) errorf(path, format string, args ...any) error {
	return strictyaml.Errorf(e.root, e.file, path, format, args...)
}

// header checks the kind and the API group.
func (e *eppReader) header() error {
	d := &e.doc
	switch {
	case d.Kind != "EndpointPickerConfig":
		return e.errorf("kind", "must be EndpointPickerConfig, got %q", d.Kind)
	case d.APIVersion != "llm-d.ai/v1alpha1" && !strings.HasPrefix(d.APIVersion, "inference.networking.x-k8s.io/"):
		return e.errorf("apiVersion", "must be llm-d.ai/v1alpha1 or inference.networking.x-k8s.io/..., got %q", d.APIVersion)
	case len(d.SchedulingProfiles) == 0:
		return e.errorf("schedulingProfiles", "at least one profile is required")
	}
	return nil
}

// plugins checks every plugin's type and parameters and applies the
// parameters handoff maps.
func (e *eppReader) plugins(cfg *LLMDConfig) error {
	for i, p := range e.doc.Plugins {
		at := fmt.Sprintf("plugins[%d]", i)
		t, ok := eppTypes[p.Type]
		if !ok {
			why := ""
			if reason, known := eppUnmodelled[p.Type]; known {
				why = " (" + reason + ")"
			}
			return e.errorf(at+".type", "plugin type %q is not modelled by handoff%s; it models: %s",
				p.Type, why, strings.Join(EPPPluginTypes(), ", "))
		}
		name := p.Name
		if name == "" {
			name = p.Type
		}
		if _, dup := e.byName[name]; dup {
			return e.errorf(at+".name", "plugin name %q is used twice", name)
		}
		e.byName[name] = i
		if t.kind == eppAffinity {
			e.affinity[name] = DefaultPrefixAffinity()
		}
		if err := e.params(at, name, p, t, cfg); err != nil {
			return err
		}
	}
	return nil
}

// params applies plugin p's parameters, refusing one handoff does not
// read (plumbing's are its own business).
func (e *eppReader) params(at, name string, p eppPlugin, t eppType, cfg *LLMDConfig) error {
	n := &p.Parameters
	if n.Kind == 0 || t.anyParams {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return e.errorf(at+".parameters", "must be a mapping")
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, v := n.Content[k].Value, n.Content[k+1]
		field := at + ".parameters." + key
		if !slices.Contains(t.params, key) {
			return e.errorf(field, "parameter %q of %s is not modelled by handoff (it reads: %s)",
				key, p.Type, strings.Join(append([]string{}, t.params...), ", "))
		}
		if err := e.param(field, name, key, v, cfg); err != nil {
			return err
		}
	}
	return nil
}

// param applies one parameter handoff reads.
func (e *eppReader) param(field, name, key string, v *yaml.Node, cfg *LLMDConfig) error {
	switch key {
	case "deciders":
		return e.deciders(field, v)
	case "affinityThreshold", "explorationProbability":
		return e.affinityParam(field, name, key, v)
	case "label":
		if v.Kind != yaml.ScalarNode || v.Value == "" {
			return e.errorf(field, "must name a pod label, as llm-d requires")
		}
		return nil
	case "enableFiltering":
		on, err := strconv.ParseBool(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			return e.errorf(field, "must be true or false, got %q", v.Value)
		}
		e.filtering[name] = on
		return nil
	}
	x, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || x < 0 {
		return e.errorf(field, "must be a non-negative integer, got %q", v.Value)
	}
	switch key {
	case "lruCapacityPerServer":
		cfg.LRUCapacityPerServer = x
	case "maxPrefixBlocksToMatch":
		if x != maxPrefixBlocks {
			return e.errorf(field, "handoff matches llm-d's %d blocks only, got %d", maxPrefixBlocks, x)
		}
	case "lruSize":
		cfg.NoHitLRUSize = x
	case "queueThresholdTokens":
		if x > 0 { // upstream's factory: ≤ 0 keeps the default
			cfg.TokenLoadThreshold = x
		}
	case "nonCachedTokens":
		e.threshold[name] = x
	}
	return nil
}

// affinityParam sets one of a prefix-affinity filter's parameters.
func (e *eppReader) affinityParam(field, name, key string, v *yaml.Node) error {
	x, err := strconv.ParseFloat(v.Value, 64)
	if v.Kind != yaml.ScalarNode || err != nil || !(x >= 0 && x <= 1) {
		return e.errorf(field, "must be a number in [0, 1], got %q", v.Value)
	}
	f := e.affinity[name]
	if key == "affinityThreshold" {
		f.AffinityThreshold = x
	} else {
		f.ExplorationProbability = x
	}
	e.affinity[name] = f
	return nil
}

// deciders: the disaggregation handler's deciders; handoff models a
// prefill decider only, which must be a prefix-based-pd-decider.
func (e *eppReader) deciders(field string, v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return e.errorf(field, "must be a mapping")
	}
	for k := 0; k+1 < len(v.Content); k += 2 {
		key, ref := v.Content[k].Value, v.Content[k+1].Value
		if key != "prefill" {
			return e.errorf(field+"."+key, "decider %q is not modelled by handoff (it models: prefill)", key)
		}
		if !e.declared(ref, "prefix-based-pd-decider") {
			return e.errorf(field+".prefill", "must name a prefix-based-pd-decider plugin declared in plugins, got %q", ref)
		}
		e.prefill = ref
	}
	return nil
}

// declared reports whether a plugin of type typ is named name; a name
// declared later in the list counts too.
func (e *eppReader) declared(name, typ string) bool {
	for _, p := range e.doc.Plugins {
		if p.Type == typ && (p.Name == name || p.Name == "" && p.Type == name) {
			return true
		}
	}
	return false
}
