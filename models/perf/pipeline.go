package perf

import "fmt"

// Pipeline prices a micro-batch's passage through the stages of a
// pipeline-parallel instance: each stage runs its layers on its own TP
// devices (a step-time model of the model cut to those layers), then
// sends the activations on to the next stage.
//
// Between two stages vLLM sends the stage's IntermediateTensors — for a
// Llama-style model the hidden states and the residual, two tensors of
// tokens × hidden elements (LlamaModel.forward in
// vllm/model_executor/models/llama.py) — in the activations' dtype (BF16,
// 2 bytes), each TP rank sending its 1/TP slice to its peer and the
// receiving stage all-gathering them over its scale-up link
// (send_tensor_dict's all_gather_group in
// vllm/distributed/parallel_state.py). A hop therefore costs the link's
// latency plus 2·2·hidden/TP bytes per token of the micro-batch over one
// device's share of the link; the all-gather on the fast scale-up link is
// not charged.
type Pipeline struct {
	stages []StepTimer // one per stage, first first
	hops   []Hop       // hops[k] joins stage k to stage k+1
}

// Hop is the link between two consecutive stages.
type Hop struct {
	LatencyNs  int64   // per message
	NsPerToken float64 // activation bytes per token per device over the device's bandwidth
}

// ActivationBytesPerToken is what one stage sends the next per token of a
// micro-batch, per TP rank: hidden states and residual, BF16, split over
// tp ranks.
func ActivationBytesPerToken(hidden, tp int) float64 {
	return 2 * 2 * float64(hidden) / float64(tp)
}

// NewPipeline joins stage timers with the hops between them; it needs one
// hop fewer than stages, at least two stages.
func NewPipeline(stages []StepTimer, hops []Hop) (*Pipeline, error) {
	if len(stages) < 2 || len(hops) != len(stages)-1 {
		return nil, fmt.Errorf("perf: a pipeline of %d stages needs %d hops, got %d", len(stages), max(len(stages)-1, 0), len(hops))
	}
	for k, h := range hops {
		if h.LatencyNs < 0 || !(h.NsPerToken >= 0) {
			return nil, fmt.Errorf("perf: pipeline hop %d: latency %d ns, %g ns per token: want both ≥ 0", k, h.LatencyNs, h.NsPerToken)
		}
	}
	return &Pipeline{stages: stages, hops: hops}, nil
}

// Stages is the number of stages.
func (p *Pipeline) Stages() int { return len(p.stages) }

// StageNs is stage k's time for micro-batch b, without the hop after it.
func (p *Pipeline) StageNs(b *Batch, k int) int64 { return p.stages[k].StepNs(b) }

// HopNs is the time micro-batch b's activations take from stage k to
// stage k+1: 0 for an empty batch.
func (p *Pipeline) HopNs(b *Batch, k int) int64 {
	n := b.Tokens()
	if n == 0 {
		return 0
	}
	h := p.hops[k]
	return h.LatencyNs + roundNs(float64(n)*h.NsPerToken)
}

// StepNs is micro-batch b's latency through an empty pipeline: every
// stage's time plus every hop. With micro-batches in flight a stage may
// make b wait (the core keeps each stage's clock); this is the price of
// one alone, which the engine's StepTimer contract asks for.
func (p *Pipeline) StepNs(b *Batch) int64 {
	var t int64
	for k := range p.stages {
		t += p.StageNs(b, k)
		if k < len(p.hops) {
			t += p.HopNs(b, k)
		}
	}
	return t
}
