package router

import (
	"math"
	"math/rand/v2"
)

// SoftmaxProbs writes into dst (grown as needed, returned) the probability
// of choosing each candidate at temperature t > 0 when lower cost is better:
//
//	p_i ∝ exp(−(c_i − c_min) / ((c_max − c_min)·t))
//
// so the costs are min-max normalised to [0, 1] before the softmax and t is
// free of the costs' scale. Equal costs give equal probabilities. Cost
// O(len(costs)). Panics if t ≤ 0 or costs is empty.
func SoftmaxProbs(dst, costs []float64, t float64) []float64 {
	if !(t > 0) || len(costs) == 0 {
		panic("router: SoftmaxProbs needs t > 0 and at least one cost")
	}
	lo, hi := costs[0], costs[0]
	for _, c := range costs {
		lo, hi = min(lo, c), max(hi, c)
	}
	dst = dst[:0]
	sum := 0.0
	for _, c := range costs {
		w := 1.0
		if hi > lo {
			w = math.Exp(-(c - lo) / ((hi - lo) * t))
		}
		dst = append(dst, w)
		sum += w
	}
	for i := range dst {
		dst[i] /= sum
	}
	return dst
}

// chooser picks among candidates by cost or score with a random stream and
// scratch space, so that choosing allocates nothing once warm.
type chooser struct {
	rng   *rand.Rand
	probs []float64
}

// minCost returns the position of the chosen candidate: the lowest cost at
// temperature 0 (ties broken uniformly at random), else a draw from
// SoftmaxProbs.
func (ch *chooser) minCost(costs []float64, t float64) int {
	if t > 0 {
		ch.probs = SoftmaxProbs(ch.probs, costs, t)
		return ch.draw(ch.probs)
	}
	best := costs[0]
	for _, c := range costs {
		best = min(best, c)
	}
	return ch.tie(costs, best)
}

// maxScore returns the position of the highest score, ties broken
// uniformly at random.
func (ch *chooser) maxScore(scores []float64) int {
	best := scores[0]
	for _, s := range scores {
		best = max(best, s)
	}
	return ch.tie(scores, best)
}

// weighted draws a position with probability proportional to its score
// (scores are ≥ 0); all zero draws uniformly.
func (ch *chooser) weighted(scores []float64) int {
	sum := 0.0
	for _, s := range scores {
		sum += s
	}
	if !(sum > 0) {
		return ch.rng.IntN(len(scores))
	}
	ch.probs = ch.probs[:0]
	for _, s := range scores {
		ch.probs = append(ch.probs, s/sum)
	}
	return ch.draw(ch.probs)
}

// tie returns a uniformly drawn position among those whose value equals
// v; the stream is used only when there is more than one.
func (ch *chooser) tie(vals []float64, v float64) int {
	n, first := 0, -1
	for i, x := range vals {
		if x == v {
			if n == 0 {
				first = i
			}
			n++
		}
	}
	if n == 1 {
		return first
	}
	k := ch.rng.IntN(n)
	for i, x := range vals {
		if x == v {
			if k == 0 {
				return i
			}
			k--
		}
	}
	panic("router: tie lost its candidate")
}

// draw samples a position from probabilities summing to 1.
func (ch *chooser) draw(probs []float64) int {
	u := ch.rng.Float64()
	for i, p := range probs {
		if u < p {
			return i
		}
		u -= p
	}
	for i := len(probs) - 1; i > 0; i-- { // rounding left u past the last share
		if probs[i] > 0 {
			return i
		}
	}
	return 0
}
