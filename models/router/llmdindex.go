package router

import "slices"

// llm-d's indexes (Indexer). Its scorers are normalised over the
// candidates — the queue scorer by the least and most waiting, the
// active-request scorer by the most outstanding — so a candidate's total
// is no function of its own view alone, and no one order of the
// candidates stands for every state. But the state the queue, KV and
// load-aware scorers read is the instances', copied at each refresh and
// frozen in between, and their normalisation with it; a prefix scorer
// adds nothing for a candidate without the prompt's first block. So
// between two refreshes a candidate without the prefix totals what it
// totalled at the first decision after the refresh, and the max-score
// picker needs only the best of those (their totals in a rankTree) and
// the candidates holding the prefix (LRUIndex.Holders, Cluster.Caching),
// priced in full, the tie drawn as the scan draws it (minCostIndexed, on
// the totals negated).
//
// The index costs O(n log n) to build at a refresh, so a leg is built at
// the llmdScansBeforeIndex-th decision after one and scanned until then;
// with a refresh before every decision it is never built. It does not
// apply, and the picker scans, with the active-request scorer (it reads
// the outstanding counts, which change with every decision, and
// normalises them by the fleet's most), with the token-load scorer (its
// bookkeeping too changes with every decision), with the no-hit-LRU scorer (its
// LRU moves with every cold request), with the prefix-affinity filter (it
// narrows the candidates the scorers normalise over), with the
// weighted-random picker (a draw over every candidate's total), or with the precise prefix
// scorer where lower KV tiers can give any candidate a share.

// llmdScansBeforeIndex is how many decisions after a refresh scan before
// a leg's index is built.
const llmdScansBeforeIndex = 4

// llmdIndex is an LLMD's indexes: a leg each.
type llmdIndex struct {
	legs  [2]llmdLeg // prefill, decode
	insts []int      // scratch: instances holding the prefix
	pick  indexedCosts
	plain llmdTotals
}

// llmdLeg is one leg's index and what it was built from.
type llmdLeg struct {
	built  bool
	scans  int         // decisions scanned since the leg was last built or went stale
	scores [][]float64 // by scorer: the candidates' scores, nil for a prefix scorer
	base   []float64   // by position: the total without a prefix
	ranks  rankTree    // by base total, highest first
	seen   []llmdState // by position: the state the scores read
	pos    []int32     // by instance index: the position, −1 for none
}

// llmdState is what of a view the queue, running-requests, KV and
// load-aware scorers read.
type llmdState struct{ waiting, running, free, total int }

func stateOf(v *View) llmdState { return llmdState{v.Waiting, v.Running, v.FreeBlocks, v.TotalBlocks} }

// llmdTotals prices the candidates without the prefix (pickIndexed).
type llmdTotals struct{ leg *llmdLeg }

// cost is the negated total of a candidate without the prefix.
func (t *llmdTotals) cost(k int) float64 { return -t.leg.base[k] }

// Reindex implements Indexer: the legs are built anew when next needed.
func (l *LLMD) Reindex(*Cluster) {
	if l.ix == nil {
		l.ix = &llmdIndex{}
	}
	for k := range l.ix.legs {
		l.ix.legs[k].built, l.ix.legs[k].scans = false, 0
	}
}

// Changed implements Indexer: a change to the state the scores read
// leaves the leg to be built anew.
func (l *LLMD) Changed(c *Cluster, decode bool, k int) {
	leg := &l.ix.legs[0]
	if decode {
		leg = &l.ix.legs[1]
	}
	if leg.built && leg.seen[k] != stateOf(&c.leg(decode)[k]) {
		leg.built, leg.scans = false, 0
	}
}

// indexable reports whether the picker can choose from the indexes.
func (l *LLMD) indexable(c *Cluster) bool {
	if l.ix == nil || l.cfg.Picker != PickerMaxScore || l.cfg.PrefixAffinity != nil || l.cfg.ContextLengthFilter {
		return false
	}
	for _, s := range l.cfg.Scorers {
		if movesPerDecision(s.Name) || s.Name == ScorerPrecisePrefix && (c.TierOverlap != nil || c.Caching == nil) {
			return false
		}
	}
	return true
}

// movesPerDecision reports whether a scorer's values move with every
// decision (the router's own bookkeeping or memory) or with every request
// (context-length-aware), so that the picker scans rather than keep them
// indexed.
func movesPerDecision(scorer string) bool {
	switch scorer {
	case ScorerActiveRequest, ScorerTokenLoad, ScorerNoHitLRU, ScorerSessionAffinity, ScorerContextLength:
		return true
	}
	return false
}

// pickIndexed is pick from the indexes; ok is false when they do not
// apply, or the leg is still scanned after a refresh.
func (l *LLMD) pickIndexed(r *Request, c *Cluster, decode bool) (k int, ok bool) {
	if !l.indexable(c) {
		return 0, false
	}
	leg, vs := &l.ix.legs[0], c.Prefill
	if decode {
		leg, vs = &l.ix.legs[1], c.Decode
	}
	if !leg.built {
		if leg.scans++; leg.scans < llmdScansBeforeIndex {
			return 0, false
		}
		l.build(leg, c, vs)
	}
	x := &l.ix.pick
	x.special = l.prefixed(x.special[:0], r, c, leg)
	x.specialCosts = x.specialCosts[:0]
	for _, k := range x.special {
		x.specialCosts = append(x.specialCosts, -l.total(r, c, leg, vs[k].Index, k))
	}
	l.ix.plain = llmdTotals{leg: leg}
	x.tree, x.costs, x.shared = &leg.ranks, &l.ix.plain, 0
	return l.ch.minCostIndexed(x), true
}

// build scores the leg's candidates without a prefix and orders them.
func (l *LLMD) build(leg *llmdLeg, c *Cluster, vs []View) {
	for len(leg.scores) < len(l.cfg.Scorers) {
		leg.scores = append(leg.scores, nil)
	}
	leg.base = leg.base[:0]
	for range vs {
		leg.base = append(leg.base, 0)
	}
	for j, s := range l.cfg.Scorers {
		leg.scores[j] = leg.scores[j][:0]
		if prefixScorer(s.Name) {
			continue // adds nothing without the prefix
		}
		leg.scores[j] = l.Score(leg.scores[j], s.Name, nil, c, vs)
		for k, x := range leg.scores[j] {
			leg.base[k] += s.Weight * x
		}
	}
	leg.seen, leg.pos = leg.seen[:0], leg.pos[:0]
	for k := range vs {
		leg.seen = append(leg.seen, stateOf(&vs[k]))
		for len(leg.pos) <= vs[k].Index {
			leg.pos = append(leg.pos, -1)
		}
		leg.pos[vs[k].Index] = int32(k)
	}
	leg.ranks.reset(len(vs), func(k int) rankKey { return rankKey{-leg.base[k]} })
	leg.built = true
}

// prefixScorer reports whether the named scorer reads the prompt's prefix.
func prefixScorer(name string) bool { return name == ScorerPrefixCache || name == ScorerPrecisePrefix }

// total is the total for r of candidate k, instance inst, as Totals adds
// it up.
func (l *LLMD) total(r *Request, c *Cluster, leg *llmdLeg, inst, k int) float64 {
	t := 0.0
	for j, s := range l.cfg.Scorers {
		var x float64
		switch s.Name {
		case ScorerPrefixCache:
			x = clampScore(l.prefixScore(r, inst))
		case ScorerPrecisePrefix:
			x = clampScore(l.preciseScore(r, c, inst))
		default:
			x = leg.scores[j][k]
		}
		t += s.Weight * x
	}
	return t
}

// prefixed appends to dst, in increasing order, the positions in the leg
// of the candidates holding r's first block, in the router's LRU index or
// (the precise scorer) in their caches.
func (l *LLMD) prefixed(dst []int, r *Request, c *Cluster, leg *llmdLeg) []int {
	ix := l.ix
	ix.insts = ix.insts[:0]
	for _, s := range l.cfg.Scorers {
		switch {
		case len(r.Hashes) == 0:
		case s.Name == ScorerPrefixCache:
			ix.insts = l.index.Holders(ix.insts, prefixBlocks(r))
		case s.Name == ScorerPrecisePrefix:
			ix.insts = c.Caching(ix.insts, r.Hashes)
		}
	}
	for _, i := range ix.insts {
		if i < len(leg.pos) && leg.pos[i] >= 0 {
			dst = append(dst, int(leg.pos[i]))
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}
