package scenarios

import "handoff/sim"

// maxContextRange bounds a pool's context_length_range: beyond it a
// length is a typo.
const maxContextRange = 1 << 30

// validateContextRange checks a pool's context_length_range: two whole
// numbers of tokens, 0 ≤ min ≤ max, max ≥ 1 (llm-d's parseContextRange
// reads a label "min-max" and refuses min > max).
func (l *Loaded) validateContextRange(at string, p *Pool) error {
	r := p.ContextLengthRange
	switch {
	case r == nil:
		return nil
	case len(r) != 2:
		return l.errorf(at+".context_length_range", "must be [min, max] in tokens, got %d numbers", len(r))
	case r[0] < 0 || r[1] < 1 || r[0] > r[1] || r[1] > maxContextRange:
		return l.errorf(at+".context_length_range", "must satisfy 0 ≤ min ≤ max, 1 ≤ max ≤ %d, got [%d, %d]",
			maxContextRange, r[0], r[1])
	}
	return nil
}

// applyContextRange gives a pool's instances its context_length_range.
func applyContextRange(p *Pool, inst *sim.Instance) {
	if r := p.ContextLengthRange; len(r) == 2 {
		inst.ContextRange = [2]int{r[0], r[1]}
	}
}
