package router

import "slices"

// ScorerNoHitLRU is llm-d's no-hit-lru-scorer (llm-d-inference-scheduler,
// pkg/epp/framework/plugins/scheduling/scorer/nohitlru/no_hit_lru.go,
// NoHitLRU.Score and PreRequest): it spreads cold requests — those no
// candidate holds a block of, by the approximate prefix index — over the
// instances least recently given one. On a cold request, with n
// candidates, those never given a cold request score 1 − i/(n−1) in the
// order they are listed (i = 0, 1, ...), then each one given some scores
// 1 − (never + p)/(n−1), clamped at 0, where p is its position in the LRU
// (0 the least recently used, over every instance the LRU holds, not only
// the candidates); a lone candidate scores 1. A request some candidate
// holds a block of scores 0.5 everywhere. Once routed, a cold request
// moves its decoder (the primary profile's pick) and then its prefiller
// to the front of the LRU, which keeps NoHitLRUSize instances, evicting
// the least recently used.
const ScorerNoHitLRU = "no-hit-lru"

// DefaultNoHitLRUSize is the no-hit-LRU scorer's capacity in instances
// (defaultLRUSize in no_hit_lru.go).
const DefaultNoHitLRUSize = 1024

// noHitLRU is the scorer's state: instances, least recently used first,
// and whether the last leg scored was cold (NoHitLRU's per-request state,
// which the last profile scored overwrites).
type noHitLRU struct {
	order []int
	cold  bool
}

// scores appends the scorer's values for vs; hot reports whether any
// candidate holds a prefix block.
func (n *noHitLRU) scores(dst []float64, vs []View, hot func(inst int) bool) []float64 {
	n.cold = !slices.ContainsFunc(vs, func(v View) bool { return hot(v.Index) })
	switch {
	case !n.cold:
		for range vs {
			dst = append(dst, 0.5)
		}
		return dst
	case len(vs) == 1:
		return append(dst, 1)
	}
	never, last := 0, float64(len(vs)-1)
	for i := range vs {
		if !slices.Contains(n.order, vs[i].Index) {
			never++
		}
	}
	fresh := 0
	for i := range vs {
		rank := fresh
		if p := slices.Index(n.order, vs[i].Index); p >= 0 {
			rank = never + p
		} else {
			fresh++
		}
		dst = append(dst, max(0, 1-float64(rank)/last))
	}
	return dst
}

// used moves inst to the most recently used end, evicting the least
// recently used beyond size.
func (n *noHitLRU) used(inst, size int) {
	if p := slices.Index(n.order, inst); p >= 0 {
		n.order = slices.Delete(n.order, p, p+1)
	}
	n.order = append(n.order, inst)
	if len(n.order) > size {
		n.order = slices.Delete(n.order, 0, len(n.order)-size)
	}
}
