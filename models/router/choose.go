package router

import (
	"math"
	"math/rand/v2"
	"slices"
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

	buckets     []costBucket // minCostIndexed's scratch
	tiedSpecial []int
	listed      []int
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

// costBucket is a run of a rankTree's positions with equal keys, which
// cost the same unless special: its ranks [start, end), a position of it,
// its cost, and how many of its positions are special.
type costBucket struct {
	start, end, pos int
	cost            float64
	special         int
}

// indexedCosts is what minCostIndexed chooses among: a leg's positions in
// a rankTree keyed so that equal keys cost the same, but for a few
// special positions, priced one by one.
type indexedCosts struct {
	tree *rankTree
	// costs prices the tree's positions that are not special. A key's
	// first component is its position's cost less shared, which every such
	// position adds alike, up to rounding: a position whose key is
	// keyTolerance(least key, shared) or more above the least key costs
	// more than the position holding the least key.
	costs  positionCosts
	shared float64
	// special are the positions priced apart, in increasing order, and
	// their costs.
	special      []int
	specialCosts []float64
}

// positionCosts prices a leg's positions.
type positionCosts interface {
	cost(k int) float64
}

// minCostIndexed returns the position minCost(costs, 0) returns, costs
// being every position's, from x without pricing every position: the
// buckets of equal keys the tolerance cannot tell from the least key
// (of a position not special) are priced once each, the special positions
// one by one, and a tie is broken by the same draw, among the same
// positions in the same order, as the scan's. Cost O((buckets priced +
// special positions) · log n), and O(log² n) per tied bucket more to find
// the drawn position when a tie spans buckets or special positions.
func (ch *chooser) minCostIndexed(x *indexedCosts) int {
	ch.buckets = ch.buckets[:0]
	best := math.Inf(1)
	t, bound := x.tree, math.Inf(1)
	for j := 0; j < t.len(); {
		k := t.kth(j)
		if t.keys[k][0] > bound {
			break
		}
		b := costBucket{start: j, end: t.before(&t.keys[k], math.MaxInt), pos: k}
		for _, s := range x.special {
			if t.keys[s] == t.keys[k] {
				b.special++
			}
		}
		j = b.end
		if b.special == b.end-b.start {
			continue // special, every one of them
		}
		if math.IsInf(bound, 1) {
			bound = t.keys[k][0] + keyTolerance(t.keys[k][0], x.shared)
		}
		b.cost = x.costs.cost(ch.plain(x, &b))
		ch.buckets = append(ch.buckets, b)
		best = min(best, b.cost)
	}
	for _, c := range x.specialCosts {
		best = min(best, c)
	}
	return ch.drawTied(x, best)
}

// plain returns a position of bucket b that is not special.
func (ch *chooser) plain(x *indexedCosts, b *costBucket) int {
	if b.special == 0 {
		return b.pos
	}
	for j := b.start; ; j++ {
		if k := x.tree.kth(j); !slices.Contains(x.special, k) {
			return k
		}
	}
}

// drawTied returns the position of cost best the scan's tie would: the
// only one, or the draw-th in position order among them all.
func (ch *chooser) drawTied(x *indexedCosts, best float64) int {
	tied := ch.buckets[:0]
	n := 0
	for _, b := range ch.buckets {
		if b.cost == best {
			tied = append(tied, b)
			n += b.end - b.start - b.special
		}
	}
	ch.buckets = tied
	ch.tiedSpecial = ch.tiedSpecial[:0]
	for j, c := range x.specialCosts {
		if c == best {
			ch.tiedSpecial = append(ch.tiedSpecial, x.special[j])
		}
	}
	n += len(ch.tiedSpecial)
	draw := 0
	if n > 1 {
		draw = ch.rng.IntN(n)
	}
	switch {
	case len(ch.tiedSpecial) == 0 && len(tied) == 1 && tied[0].special == 0:
		return x.tree.kth(tied[0].start + draw)
	case len(tied) == 0:
		return ch.tiedSpecial[draw]
	case n <= maxListedTies:
		return ch.listTied(x)[draw]
	}
	// The draw-th tied position: the least p with more than draw tied
	// positions at or below it.
	lo, hi := 0, len(x.tree.keys)
	for lo < hi {
		p := (lo + hi) / 2
		if ch.tiedBelow(x, p+1) > draw {
			hi = p
		} else {
			lo = p + 1
		}
	}
	return lo
}

// maxListedTies is how many tied positions drawTied lists and sorts
// rather than search them by rank (a variable: tests take the search).
var maxListedTies = 64

// listTied returns the tied positions in increasing order.
func (ch *chooser) listTied(x *indexedCosts) []int {
	list := append(ch.listed[:0], ch.tiedSpecial...)
	for _, b := range ch.buckets {
		from := len(list)
		list = x.tree.appendRange(list, b.start, b.end)
		if b.special > 0 { // special: tied or not by its own cost
			kept := list[:from]
			for _, k := range list[from:] {
				if !slices.Contains(x.special, k) {
					kept = append(kept, k)
				}
			}
			list = kept
		}
	}
	slices.Sort(list)
	ch.listed = list
	return list
}

// tiedBelow counts the tied positions below p.
func (ch *chooser) tiedBelow(x *indexedCosts, p int) int {
	n := 0
	for _, b := range ch.buckets {
		key := &x.tree.keys[b.pos]
		n += x.tree.before(key, p) - b.start
		for _, s := range x.special {
			if s < p && x.tree.keys[s] == *key {
				n-- // special: tied or not by its own cost
			}
		}
	}
	for _, k := range ch.tiedSpecial {
		if k < p {
			n++
		}
	}
	return n
}

// keyTolerance bounds how far a cost computed in float64 from a few
// non-negative terms, of the size of a key plus shared, may stray from the
// key plus shared computed apart: a few units in the last place of their
// sum, taken very wide (1e-9 of it).
func keyTolerance(key, shared float64) float64 {
	return 1e-9 * (math.Abs(key) + math.Abs(shared) + 1)
}
