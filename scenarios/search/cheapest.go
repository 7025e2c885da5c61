package search

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// FleetFunc runs a fleet and reports whether it met the target. An error
// ends the search.
type FleetFunc func(f Fleet) (bool, error)

// Choice is a search's answer.
type Choice struct {
	Fleet       Fleet   // the cheapest fleet that met the target; valid when Found
	CostPerHour float64 // its price, USD per hour
	Found       bool
	Runs        int // evaluations made
}

// ErrRunBudget is returned (wrapped) when a search stops at its run limit;
// the Choice returned with it holds the best fleet found so far.
var ErrRunBudget = errors.New("run limit reached")

// costTolerance is the relative difference below which two fleet prices
// are equal, so that rounding does not decide between equal fleets.
const costTolerance = 1e-9

// Less reports whether fleet a is preferred to b: cheaper, then fewer
// GPUs, then earlier in the Space's order (variants, then counts,
// lexicographically). The order is total, so the pruned search and the
// grid agree on the answer even among fleets of equal price. O(pools).
func (s Space) Less(a, b Fleet) bool {
	if ca, cb := s.CostPerHour(a), s.CostPerHour(b); !sameCost(ca, cb) {
		return ca < cb
	}
	if ga, gb := s.GPUs(a), s.GPUs(b); ga != gb {
		return ga < gb
	}
	if c := slices.Compare(a.Variant, b.Variant); c != 0 {
		return c < 0
	}
	return slices.Compare(a.Count, b.Count) < 0
}

// Grid evaluates every fleet in the space, stopping after maxRuns (0 = no
// limit), and returns the best that met the target. It is the reference
// Cheapest is tested against. Cost: Π over pools of variants × counts runs.
func (s Space) Grid(meets FleetFunc, maxRuns int) (Choice, error) {
	sr := searcher{s: s, meets: meets, maxRuns: maxRuns}
	err := s.eachCombo(func(v []int) error {
		f := s.minFleet(v)
		for {
			if _, err := sr.try(f); err != nil {
				return err
			}
			if !s.nextCount(f.Count) {
				return nil
			}
		}
	})
	return sr.choice(), err
}

// Cheapest returns the cheapest fleet in the space that meets the target,
// assuming that a fleet which meets it still does with more instances in
// any pool (and the same variants). Variant combinations are tried in
// order of their least price. Within one, the counts of all pools but the
// last are enumerated in increasing order, stopping once even their least
// completion costs more than the best fleet found; for each, a binary
// search finds the least count of the last pool that meets the target,
// below both the price of the best fleet and the least count that met it
// with fewer instances in the other pools. It returns the fleet Grid would
// when the assumption holds. maxRuns bounds the evaluations (0 = none).
// Panics if the space has no pools.
// Cost: for two pools of n counts each, about n·log₂ n runs at most, often
// far fewer.
func (s Space) Cheapest(meets FleetFunc, maxRuns int) (Choice, error) {
	if len(s.Pools) == 0 {
		panic("search: a space without pools")
	}
	sr := searcher{s: s, meets: meets, maxRuns: maxRuns}
	var combos [][]int
	_ = s.eachCombo(func(v []int) error { combos = append(combos, slices.Clone(v)); return nil })
	slices.SortStableFunc(combos, func(a, b []int) int {
		return cmp.Compare(s.CostPerHour(s.minFleet(a)), s.CostPerHour(s.minFleet(b)))
	})
	for _, v := range combos {
		sr.stairs = sr.stairs[:0]
		if err := sr.outer(s.minFleet(v), 0); err != nil {
			return sr.choice(), err
		}
	}
	return sr.choice(), nil
}

// searcher holds one search's state.
type searcher struct {
	s       Space
	meets   FleetFunc
	maxRuns int
	runs    int
	best    Fleet
	found   bool
	stairs  []stair // this variant combination's rows that met the target
}

// stair records that with these counts in the other pools, the last pool
// first met the target at last instances.
type stair struct {
	others []int
	last   int
}

// try evaluates a fleet and keeps it if it is the best so far.
func (sr *searcher) try(f Fleet) (bool, error) {
	if sr.maxRuns > 0 && sr.runs == sr.maxRuns {
		return false, fmt.Errorf("search stopped after %d runs: %w", sr.runs, ErrRunBudget)
	}
	sr.runs++
	ok, err := sr.meets(f)
	if err != nil || !ok {
		return false, err
	}
	if !sr.found || sr.s.Less(f, sr.best) {
		sr.best, sr.found = f.Clone(), true
	}
	return true, nil
}

func (sr *searcher) choice() Choice {
	c := Choice{Found: sr.found, Runs: sr.runs}
	if sr.found {
		c.Fleet, c.CostPerHour = sr.best, sr.s.CostPerHour(sr.best)
	}
	return c
}

// sameCost reports whether two prices are equal within costTolerance.
func sameCost(a, b float64) bool {
	return abs(a-b) <= costTolerance*max(abs(a), abs(b))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// tooDear reports whether f costs more than the best fleet found, beyond
// the tolerance within which the tie-break decides.
func (sr *searcher) tooDear(f Fleet) bool {
	if !sr.found {
		return false
	}
	c, best := sr.s.CostPerHour(f), sr.s.CostPerHour(sr.best)
	return c > best && !sameCost(c, best)
}

// outer enumerates the count of pool i (not the last) upwards from the
// fleet's, with the pools after it at their least counts.
func (sr *searcher) outer(f Fleet, i int) error {
	last := len(f.Count) - 1
	if i == last {
		return sr.row(f)
	}
	p := sr.s.Pools[i]
	for c := p.MinCount; c <= p.MaxCount; c++ {
		f.Count[i] = c
		for j := i + 1; j <= last; j++ {
			f.Count[j] = sr.s.Pools[j].MinCount
		}
		if sr.tooDear(f) {
			return nil // more instances only cost more
		}
		if err := sr.outer(f, i+1); err != nil {
			return err
		}
	}
	return nil
}

// row finds the least count of the last pool that meets the target, the
// other pools' counts fixed, within the price of the best fleet found.
func (sr *searcher) row(f Fleet) error {
	last := len(f.Count) - 1
	p := sr.s.Pools[last]
	lo, hi := p.MinCount, p.MaxCount
	implied := false // hi meets because it met with fewer instances elsewhere
	if d, ok := sr.stairBelow(f.Count[:last]); ok && d <= hi {
		hi, implied = d, true
	}
	for ; hi >= lo; hi, implied = hi-1, false {
		if f.Count[last] = hi; !sr.tooDear(f) {
			break
		}
	}
	if hi < lo {
		return nil
	}
	ranHi := !implied
	if ranHi {
		if ok, err := sr.try(f); err != nil || !ok {
			return err
		}
	}
	for lo < hi {
		f.Count[last] = lo + (hi-lo)/2
		ok, err := sr.try(f)
		if err != nil {
			return err
		}
		if ok {
			hi, ranHi = f.Count[last], true
		} else {
			lo = f.Count[last] + 1
		}
	}
	return sr.settle(f, hi, ranHi)
}

// settle records the row's answer, hi instances in the last pool, running
// it first if only monotonicity vouched for it and it would be the best.
func (sr *searcher) settle(f Fleet, hi int, ran bool) error {
	last := len(f.Count) - 1
	f.Count[last] = hi
	if !ran {
		if sr.found && !sr.s.Less(f, sr.best) {
			return nil
		}
		if ok, err := sr.try(f); err != nil || !ok {
			return err
		}
	}
	sr.stairs = append(sr.stairs, stair{others: slices.Clone(f.Count[:last]), last: hi})
	return nil
}

// stairBelow returns the least last-pool count that met the target with at
// most these counts in every other pool, if any row did.
func (sr *searcher) stairBelow(others []int) (int, bool) {
	d, ok := 0, false
	for _, st := range sr.stairs {
		if dominated(st.others, others) && (!ok || st.last < d) {
			d, ok = st.last, true
		}
	}
	return d, ok
}

// dominated reports whether a ≤ b in every component.
func dominated(a, b []int) bool {
	for i := range a {
		if a[i] > b[i] {
			return false
		}
	}
	return true
}

// eachCombo calls fn with every combination of variant indices, the first
// pool's slowest. fn must not keep v.
func (s Space) eachCombo(fn func(v []int) error) error {
	v := make([]int, len(s.Pools))
	for {
		if err := fn(v); err != nil {
			return err
		}
		i := len(v) - 1
		for ; i >= 0; i-- {
			if v[i]++; v[i] < len(s.Pools[i].Variants) {
				break
			}
			v[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

// minFleet returns the fleet of variants v with every pool at its least count.
func (s Space) minFleet(v []int) Fleet {
	f := Fleet{Variant: slices.Clone(v), Count: make([]int, len(s.Pools))}
	for i, p := range s.Pools {
		f.Count[i] = p.MinCount
	}
	return f
}

// nextCount steps counts to the next combination, the last pool fastest,
// and reports false after the last one.
func (s Space) nextCount(counts []int) bool {
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i]++; counts[i] <= s.Pools[i].MaxCount {
			return true
		}
		counts[i] = s.Pools[i].MinCount
	}
	return false
}
