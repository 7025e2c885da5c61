package router

// ScorerContextLength is llm-d's context-length-aware scorer
// (llm-d-inference-scheduler, pkg/epp/framework/plugins/scheduling/
// scorer/contextlengthaware/context_length_aware.go, Score and
// calculateRangeScore): each pod declares the prompt lengths it serves
// in a label "min-max" (handoff: its pool's context_length_range,
// Cluster.ContextRange), and a request of n prompt tokens scores
//
//	in range, min ≤ n ≤ max:  0.3 + 0.7 · (0.7 / (1 + (max − min)/10000) + 0.3 · (max − n)/(max − min))
//	                          (1 when max = min)
//	out of range:             0.3 / (1 + d/1000), d the distance to the range
//	no range:                 0.5
//
// so a tighter range that holds the request wins, and among those that do
// not, the nearest. Upstream counts the prompt's tokens when a tokenizer
// runs and estimates characters / 4 otherwise; handoff knows the tokens.
// With LLMDConfig.ContextLengthFilter (its enableFiltering) the plugin
// also filters: pods whose range does not hold the request are dropped
// before scoring, pods without a range kept (Filter).
const ScorerContextLength = "context-length-aware"

// contextScore is the scorer's value for a request of n prompt tokens on
// an instance deployed for [lo, hi].
func contextScore(n, lo, hi int) float64 {
	const fallback = 0.3
	if n >= lo && n <= hi {
		width := hi - lo
		if width == 0 {
			return 1
		}
		widthScore := 1 / (1 + float64(width)/10000)
		position := float64(hi-n) / float64(width)
		return fallback + (0.7*widthScore+0.3*position)*(1-fallback)
	}
	d := lo - n
	if n > hi {
		d = n - hi
	}
	return fallback / (1 + float64(d)/1000)
}

// contextScores appends the scorer's values for vs.
func contextScores(dst []float64, r *Request, c *Cluster, vs []View) []float64 {
	for i := range vs {
		s := 0.5
		if c != nil && c.ContextRange != nil {
			if lo, hi, ok := c.ContextRange(vs[i].Index); ok {
				s = contextScore(r.PromptTokens, lo, hi)
			}
		}
		dst = append(dst, s)
	}
	return dst
}

// contextFilter returns vs, or with ContextLengthFilter the candidates
// whose range holds the request (and those without one), copied into l's
// scratch; fit maps a kept candidate's position to its position in vs
// (nil when vs is returned whole).
func (l *LLMD) contextFilter(r *Request, c *Cluster, vs []View) (out []View, fit []int) {
	if !l.cfg.ContextLengthFilter || c.ContextRange == nil {
		return vs, nil
	}
	l.fitKept, l.fitting = l.fitKept[:0], l.fitting[:0]
	for k := range vs {
		lo, hi, ok := c.ContextRange(vs[k].Index)
		if !ok || r.PromptTokens >= lo && r.PromptTokens <= hi {
			l.fitKept, l.fitting = append(l.fitKept, k), append(l.fitting, vs[k])
		}
	}
	return l.fitting, l.fitKept
}
