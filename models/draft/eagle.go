package draft

import "handoff/models/llm"

// EAGLE drafts with a one-layer head trained on the target's hidden
// states (Li et al., EAGLE, ICML 2024): a fully connected layer joining
// the hidden state and the next token's embedding (2h × h), one decoder
// layer of the target's width, and the target's LM head. vLLM: method
// eagle, vllm/v1/spec_decode/eagle.py.
type EAGLE struct{}

// Name is "eagle".
func (EAGLE) Name() string { return "eagle" }

// MaxTokens is the rejection sampler's limit.
func (EAGLE) MaxTokens(*llm.Model) int { return MaxSpecLen }

// Check accepts every model: a head is trained for the target.
func (EAGLE) Check(*llm.Model) error { return nil }

// Lookahead: use_eagle().
func (EAGLE) Lookahead() bool { return true }

// UsesModel is false: the head's size follows from the target's.
func (EAGLE) UsesModel() bool { return false }

// Network is the head: fc, a dense decoder layer and the LM head.
func (EAGLE) Network(target, _ *llm.Model) *llm.Model {
	h, v := float64(target.Hidden), float64(target.Vocab)
	return denseLayerOf(target, target.Name+"-eagle", 2*h*h+v*h)
}
