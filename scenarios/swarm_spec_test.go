package scenarios

import (
	"fmt"
	"slices"
	"strings"
)

// swarmDrafters are the drafting methods the swarm draws: all but mtp,
// which needs a model whose checkpoint has MTP modules (DeepSeek-V3/R1,
// GLM-4.5), none of which fits the swarm's devices; deepseek-r1-pd-mtp.yaml
// and TestSpeculativeShippedScenario run it.
func swarmDrafters() []string {
	return slices.DeleteFunc(drafterNames(), func(n string) bool { return n == "mtp" })
}

// speculative draws, for some cases, one speculative block every GPU pool
// of the case runs (so a drafting decoder's prefillers run its drafter):
// a method the served model allows, k from 0 (off) to 4, and acceptance
// as rates, non-increasing for a model drafter, or a published set.
//
// A case with a pipeline drafts nowhere: speculative decoding with pp > 1
// is refused.
func (d *swarmDoc) speculative(p *swarmPool) {
	if d.spec == "" && (p.pp > 1 || slices.ContainsFunc(d.pools, func(q swarmPool) bool { return q.pp > 1 })) {
		d.spec = "none"
	}
	if d.spec == "" {
		d.spec = d.drawSpeculative()
	}
	if d.spec != "none" {
		d.line("    speculative: %s", d.spec)
	}
}

func (d *swarmDoc) drawSpeculative() string {
	rng := d.rng
	if rng.IntN(3) == 0 {
		return "none"
	}
	methods := swarmDrafters()
	if d.model != "gpt-oss-120b" {
		methods = slices.DeleteFunc(methods, func(n string) bool { return n == "draft_model" })
	}
	method := pickOf(rng, methods)
	k := rng.IntN(5)
	parts := []string{"method: " + method, fmt.Sprintf("num_tokens: %d", k)}
	if method == "draft_model" {
		parts = append(parts, "draft_model: gpt-oss-20b")
	}
	if method == "eagle3" && k <= 3 && rng.IntN(2) == 0 {
		return "{" + strings.Join(append(parts, "acceptance: "+pick(rng, "llama-3.1-8b-eagle3", "qwen3-8b-eagle3", "gpt-oss-20b-eagle3")), ", ") + "}"
	}
	rates := make([]string, max(k, 1))
	a := 1.0
	for i := range rates {
		if method == "ngram" {
			a = rng.Float64()
		} else {
			a *= 0.5 + rng.Float64()/2 // non-increasing
		}
		rates[i] = fmt.Sprintf("%.3f", a)
	}
	return "{" + strings.Join(append(parts, "acceptance: ["+strings.Join(rates, ", ")+"]"), ", ") + "}"
}
