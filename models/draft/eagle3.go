package draft

import "handoff/models/llm"

// EAGLE3 drafts with an EAGLE-3 head (Li et al., EAGLE-3, 2025): the
// target's low, middle and high layers' hidden states joined (3h × h),
// one decoder layer, and an LM head over a reduced draft vocabulary
// (32,000 tokens in the published heads' draft_vocab_size, mapped to
// the target's by d2t). vLLM: method eagle3, vllm/v1/spec_decode/eagle.py.
type EAGLE3 struct{}

// eagle3DraftVocab is the draft vocabulary of the published EAGLE-3 heads.
const eagle3DraftVocab = 32000

// Name is "eagle3".
func (EAGLE3) Name() string { return "eagle3" }

// MaxTokens is the rejection sampler's limit.
func (EAGLE3) MaxTokens(*llm.Model) int { return MaxSpecLen }

// Check accepts every model: a head is trained for the target.
func (EAGLE3) Check(*llm.Model) error { return nil }

// Lookahead: use_eagle().
func (EAGLE3) Lookahead() bool { return true }

// UsesModel is false.
func (EAGLE3) UsesModel() bool { return false }

// Network is the head: fc over three hidden states, a dense decoder
// layer and the draft-vocabulary LM head.
func (EAGLE3) Network(target, _ *llm.Model) *llm.Model {
	h := float64(target.Hidden)
	return denseLayerOf(target, target.Name+"-eagle3", 3*h*h+eagle3DraftVocab*h)
}
