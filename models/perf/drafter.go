package perf

import "handoff/models/llm"

// A speculative drafter's time in a step (models/draft names the kinds).
//
// vLLM V1 proposes draft tokens after every step, for every sequence that
// sampled, in the same engine step as the target's forward pass
// (GPUModelRunner.propose_draft_token_ids, vllm/v1/worker/gpu_model_runner.py).
// A model-based proposer (EAGLE, EAGLE-3, MTP and a separate draft model
// all share SpecDecodeBaseProposer.propose, vllm/v1/spec_decode/
// llm_base_proposer.py; eagle.py only passes the target's hidden states in)
// runs its network first over every token the step computed — which also
// writes the drafter's own KV for them, prompt chunks included — and then
// k − 1 more times over one token per sequence, each feeding it the draft
// token the last pass sampled. n-gram drafting runs on the CPU
// (vllm/v1/spec_decode/ngram_proposer.py, NgramProposer.propose: a numba
// search of the context for its last n tokens) and is not priced.

// DrafterTimer prices a drafter's passes in one step.
type DrafterTimer struct {
	net *Roofline // the drafter's network, without the fixed per-step costs the target's step already pays
	k   int       // draft tokens per sequence per step
}

// NewDrafterTimer returns the timer of a drafter whose network net
// proposes k tokens per sequence per step. net must be built with no step
// overhead and no CPU costs (the target's step carries them once).
func NewDrafterTimer(net *Roofline, k int) *DrafterTimer {
	if k < 1 {
		panic("perf: drafter with fewer than one draft token")
	}
	return &DrafterTimer{net: net, k: k}
}

// DraftNs is the drafter's time in the step of batch b: a pass over the
// step's tokens, then k − 1 passes of one token per decoding sequence,
// each over a context one token longer. Cost O(k), no allocation.
func (d *DrafterTimer) DraftNs(b *Batch) float64 {
	if b.Empty() {
		return 0
	}
	ns := d.net.stepNs(b)
	if b.DecodeSeqs == 0 {
		return ns // no sequence drafts past its first token in this step
	}
	one := Batch{DecodeSeqs: b.DecodeSeqs, DecodeContext: b.DecodeContext + int64(b.SpecTokens)}
	for range d.k - 1 {
		one.DecodeContext += int64(b.DecodeSeqs)
		ns += d.net.stepNs(&one)
	}
	return ns
}

// WithDrafter adds a drafter's passes to target's price of every step
// (nil d: target alone). A data-parallel group's step (GroupTimer) waits
// for the rank whose drafter takes longest.
func WithDrafter(target StepTimer, d *DrafterTimer) StepTimer {
	if d == nil {
		return target
	}
	if g, ok := target.(GroupTimer); ok {
		return &draftedGroup{drafted: drafted{target, d}, group: g}
	}
	return &drafted{target, d}
}

type drafted struct {
	target StepTimer
	d      *DrafterTimer
}

func (t *drafted) StepNs(b *Batch) int64 {
	if b.Empty() {
		return 0
	}
	return t.target.StepNs(b) + roundNs(min(t.d.DraftNs(b), maxStepNs))
}

type draftedGroup struct {
	drafted
	group GroupTimer
}

func (t *draftedGroup) GroupStepNs(ranks []*Batch) int64 {
	worst := 0.0
	for _, b := range ranks {
		if b != nil {
			worst = max(worst, t.d.DraftNs(b))
		}
	}
	ns := t.group.GroupStepNs(ranks)
	if ns == 0 {
		return 0
	}
	return ns + roundNs(min(worst, maxStepNs))
}

// NewDrafter builds the drafter timer of network net proposing k tokens
// per sequence per step on the pool env describes: a roofline of net on
// the pool's devices and layout, without the step overhead and CPU costs
// the target's step already pays once.
func NewDrafter(env Env, net *llm.Model, k int) (*DrafterTimer, error) {
	dev := env.Device
	dev.Serving.StepPerSeqNs, dev.Serving.StepPerTokenNs = 0, 0
	r, err := NewRoofline(RooflineConfig{Model: net, Device: dev, Layout: env.Layout, ScaleUp: env.ScaleUp,
		Compute: env.Compute, Release: env.Release,
		Experts: ExpertConfig{ScaleOut: env.ScaleOut, Domain: env.Domain}})
	if err != nil {
		return nil, err
	}
	return NewDrafterTimer(r, k), nil
}
