package parallel

import "handoff/models/llm"

// StageLayers is how many of m's layers each of the layout's PP stages
// holds, first stage first, as vLLM splits them (get_pp_indices in
// vllm/distributed/utils.py): layers/PP each, and when PP does not divide
// the layers the remainder r goes one each to the r stages before the
// last (the last carries the final norm and the LM head, the first the
// embedding, so with r ≤ PP − 2 only middle stages take one). It panics
// if PP < 1 or PP exceeds the layers (Check refuses that).
func (l Layout) StageLayers(m *llm.Model) []int {
	if l.PP < 1 || l.PP > m.Layers {
		panic("parallel: pp must be between 1 and the model's layers")
	}
	out := make([]int, l.PP)
	for i := range out {
		out[i] = m.Layers / l.PP
	}
	for i := 2; i < m.Layers%l.PP+2; i++ {
		out[l.PP-i]++
	}
	return out
}

// maxStageLayers is the layers of the largest stage: the stage whose
// device holds the most weights and the most KV per token, and so the
// fewest KV blocks.
func (l Layout) maxStageLayers(m *llm.Model) int {
	most := 0
	for _, n := range l.StageLayers(m) {
		most = max(most, n)
	}
	return most
}

// stageShare scales a whole-model figure to the largest stage's share:
// x/PP when PP divides the layers (as Memory always computed it), else
// x·largest/layers.
func (l Layout) stageShare(m *llm.Model, x float64) float64 {
	if l.PP <= 1 || m.Layers%l.PP == 0 {
		return x / float64(l.PP)
	}
	return x * float64(l.maxStageLayers(m)) / float64(m.Layers)
}
