package draft

import (
	"fmt"

	"handoff/models/llm"
)

// Model drafts with a smaller catalog model run autoregressively beside
// the target (vLLM: method draft_model, vllm/v1/spec_decode/
// draft_model.py, on SpecDecodeBaseProposer like EAGLE; its KV reserved
// ahead as uses_draft_model() sets num_lookahead_tokens).
type Model struct{}

// Name is "draft_model".
func (Model) Name() string { return "draft_model" }

// MaxTokens is the rejection sampler's limit.
func (Model) MaxTokens(*llm.Model) int { return MaxSpecLen }

// Check accepts every target; the draft model is checked by CheckPair.
func (Model) Check(*llm.Model) error { return nil }

// Lookahead: uses_draft_model().
func (Model) Lookahead() bool { return true }

// UsesModel is true.
func (Model) UsesModel() bool { return true }

// Network is the draft model itself.
func (Model) Network(_, draft *llm.Model) *llm.Model { return draft }

// CheckPair reports why draft cannot draft for target: it must share the
// target's vocabulary (vLLM verifies draft token ids against the target's
// logits) and be smaller.
func CheckPair(target, draft *llm.Model) error {
	switch {
	case draft == nil:
		return errNoModel("draft_model")
	case draft.Vocab != target.Vocab:
		return fmt.Errorf("draft model %s has a vocabulary of %d tokens, %s of %d: a draft model must share the target's tokenizer",
			draft.Name, draft.Vocab, target.Name, target.Vocab)
	case draft.ParamsActive >= target.ParamsActive:
		return fmt.Errorf("draft model %s (%.3g active params) is not smaller than %s (%.3g)",
			draft.Name, draft.ParamsActive, target.Name, target.ParamsActive)
	}
	return nil
}
