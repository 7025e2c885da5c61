package draft

import "handoff/models/llm"

// Ngram drafts by prompt lookup: the continuation of the last earlier
// occurrence of the context's last n tokens (vLLM's NgramProposer,
// vllm/v1/spec_decode/ngram_proposer.py, a numba search on the CPU). It
// costs no GPU time, and its CPU time (microseconds per sequence) is
// left out; it writes no KV ahead, so vLLM reserves no lookahead slots.
type Ngram struct{}

// Name is "ngram".
func (Ngram) Name() string { return "ngram" }

// MaxTokens is the rejection sampler's limit.
func (Ngram) MaxTokens(*llm.Model) int { return MaxSpecLen }

// Check accepts every model.
func (Ngram) Check(*llm.Model) error { return nil }

// Lookahead is false (num_lookahead_tokens stays 0).
func (Ngram) Lookahead() bool { return false }

// UsesModel is false.
func (Ngram) UsesModel() bool { return false }

// Network is nil: nothing on the GPU.
func (Ngram) Network(_, _ *llm.Model) *llm.Model { return nil }
