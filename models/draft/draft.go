// Package draft holds the kinds of speculative-decoding drafters a pool
// may run (scenario field speculative.method): what each allows, whether
// vLLM reserves lookahead KV slots for it, and the network its passes run
// (priced by perf.DrafterTimer). Each kind is one file here and one line
// in scenarios/speculative.go.
package draft

import (
	"fmt"

	"handoff/models/llm"
)

// Kind is one drafting method.
type Kind interface {
	// Name is the method as a scenario spells it.
	Name() string
	// MaxTokens is the most draft tokens per step the method allows for
	// target.
	MaxTokens(target *llm.Model) int
	// Check reports why the method cannot serve target (nil: it can).
	Check(target *llm.Model) error
	// Lookahead reports whether vLLM reserves k lookahead KV slots per
	// sequence for it (scheduler.py: num_lookahead_tokens =
	// num_spec_tokens when use_eagle() or uses_draft_model(); n-gram
	// drafting writes no KV ahead and reserves none).
	Lookahead() bool
	// UsesModel reports whether the method drafts with a separate catalog
	// model (speculative.draft_model).
	UsesModel() bool
	// Network is the network one draft pass runs for target (draft: the
	// draft model, when UsesModel); nil: no GPU work (n-gram).
	Network(target, draft *llm.Model) *llm.Model
}

// MaxSpecLen is the most draft tokens vLLM's rejection sampler verifies
// per sequence (MAX_SPEC_LEN, vllm/v1/sample/rejection_sampler.py).
const MaxSpecLen = 128

// layerOf returns a one-decoder-layer model of target's shape: the
// attention and FFN of one of its layers (for a MoE model, an average
// MoE layer: its share of the non-embedding shared weights and of the
// experts), plus extra parameters every token runs through (projections,
// an LM head). The per-layer figures are derived from the catalog's
// totals, so they are means over the model's layers.
func layerOf(target *llm.Model, name string, extra float64) *llm.Model {
	m := *target
	emb := float64(target.Vocab) * float64(target.Hidden)
	layers := float64(target.Layers)
	shared := (target.SharedParams() - 2*emb) / layers
	experts, active := 0.0, 0.0
	if n := target.MoELayers(); n > 0 {
		experts = target.ExpertParams() / float64(n)
		active = (target.ParamsActive - target.SharedParams()) / float64(n)
	}
	m.Name, m.Layers, m.DenseLayers = name, 1, 0
	if m.SlidingLayers > 0 {
		m.SlidingLayers, m.SlidingWindow = 0, 0 // a drafter layer attends to the whole context
	}
	m.ParamsTotal = shared + experts + extra
	m.ParamsActive = shared + active + extra
	return &m
}

// denseLayerOf returns a one-layer dense model with target's attention and
// an MLP of target's intermediate width, plus extra parameters: an EAGLE
// head.
func denseLayerOf(target *llm.Model, name string, extra float64) *llm.Model {
	m := *target
	h := float64(target.Hidden)
	attn := h*float64(target.Heads*target.HeadDim)*2 + h*float64(target.KVHeads*target.HeadDim)*2
	mlp := 3 * h * float64(target.Intermediate)
	m.Name, m.Layers, m.DenseLayers = name, 1, 0
	m.Experts, m.ExpertsPerTok, m.SharedExperts = 0, 0, 0
	m.SlidingLayers, m.SlidingWindow = 0, 0
	m.ExpertDType, m.ExpertWeightBytes = "", 0
	m.ParamsTotal = attn + mlp + extra
	m.ParamsActive = m.ParamsTotal
	return &m
}

// errNoModel is the error of a method that needs a draft model given none.
func errNoModel(method string) error {
	return fmt.Errorf("method %s needs draft_model: a catalog model to draft with", method)
}
