package search

import (
	"errors"
	"fmt"
	"math"
)

// Defaults of a Bisection's zero fields.
const (
	DefaultTolerance = 0.02 // relative width hi/lo − 1 at which bisection stops
	DefaultMaxRuns   = 24   // evaluations per search
	DefaultMinScale  = 1.0 / 1024
	DefaultMaxScale  = 1024.0
)

// MeetsFunc reports whether the configuration meets its target when the
// arrival rate is scaled by scale (> 0). An error ends the search.
type MeetsFunc func(scale float64) (bool, error)

// Bisection searches for the highest rate scale that meets a target. It
// starts at Start, doubles (or halves) until the target is bracketed
// between a scale that meets it and one that does not, then bisects
// geometrically (the midpoint of lo and hi is √(lo·hi)) until hi/lo − 1 <
// Tolerance. Zero fields take the defaults above.
type Bisection struct {
	Start     float64 // first scale tried; 0 = 1
	Tolerance float64 // stop when hi/lo − 1 < Tolerance; 0 = DefaultTolerance
	MaxRuns   int     // evaluations at most; 0 = DefaultMaxRuns
	MinScale  float64 // lowest scale tried while halving; 0 = DefaultMinScale
	MaxScale  float64 // highest scale tried while doubling; 0 = DefaultMaxScale
}

// Bracket is a Bisection's answer: the goodput scale lies in [Lo, Hi).
type Bracket struct {
	Lo        float64 // highest scale measured that met the target; 0 = none down to MinScale
	Hi        float64 // lowest scale measured that missed it; +Inf = none up to MaxScale
	Runs      int     // evaluations made
	Converged bool    // Hi/Lo − 1 < Tolerance, or a bound was reached (Lo = 0 or Hi = +Inf)
}

// withDefaults fills zero fields and checks the rest.
func (b Bisection) withDefaults() (Bisection, error) {
	fill := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	fill(&b.Start, 1)
	fill(&b.Tolerance, DefaultTolerance)
	fill(&b.MinScale, DefaultMinScale)
	fill(&b.MaxScale, DefaultMaxScale)
	if b.MaxRuns == 0 {
		b.MaxRuns = DefaultMaxRuns
	}
	switch {
	case !(b.Tolerance > 0 && b.Tolerance < 1):
		return b, fmt.Errorf("tolerance must be in (0, 1), got %g", b.Tolerance)
	case b.MaxRuns < 1:
		return b, fmt.Errorf("max runs must be positive, got %d", b.MaxRuns)
	case !(b.MinScale > 0 && b.MinScale <= b.Start && b.Start <= b.MaxScale && !math.IsInf(b.MaxScale, 0)):
		return b, fmt.Errorf("want 0 < min scale %g ≤ start %g ≤ max scale %g", b.MinScale, b.Start, b.MaxScale)
	}
	return b, nil
}

// errBudget stops a search that has used its evaluations.
var errBudget = errors.New("search: run budget spent")

// Search runs the bisection. meets must be non-increasing in scale (once it
// misses, it misses at every higher scale); if it is not, the answer is
// still a measured scale that met the target, below one that missed it.
// Running out of MaxRuns is not an error: the Bracket says it did not
// converge. Cost: at most MaxRuns calls of meets, each at a new scale.
func (b Bisection) Search(meets MeetsFunc) (Bracket, error) {
	return b.run(Bracket{Hi: math.Inf(1)}, meets, true)
}

// Narrow bisects a bracket already measured — met at from.Lo > 0, missed at
// a finite from.Hi > from.Lo — without measuring its ends again, as Search
// would after bracketing. Start, MinScale and MaxScale are not used; Runs
// counts from from.Runs. Cost: at most MaxRuns more calls of meets.
func (b Bisection) Narrow(from Bracket, meets MeetsFunc) (Bracket, error) {
	if !(from.Lo > 0 && from.Lo < from.Hi && !math.IsInf(from.Hi, 1)) {
		return from, fmt.Errorf("narrowing needs 0 < lo < hi < ∞, got [%g, %g)", from.Lo, from.Hi)
	}
	b.Start, b.MinScale, b.MaxScale = from.Lo, from.Lo, from.Hi
	runs := from.Runs
	br, err := b.run(Bracket{Lo: from.Lo, Hi: from.Hi}, meets, false)
	br.Runs += runs
	return br, err
}

// run checks the options, brackets if asked to, and bisects.
func (b Bisection) run(br Bracket, meets MeetsFunc, bracketing bool) (Bracket, error) {
	b, err := b.withDefaults()
	if err != nil {
		return Bracket{}, err
	}
	eval := func(s float64) (bool, error) {
		if br.Runs == b.MaxRuns {
			return false, errBudget
		}
		br.Runs++
		return meets(s)
	}
	if bracketing {
		err = b.bracket(&br, eval)
	}
	if err == nil {
		err = b.bisect(&br, eval)
	}
	if errors.Is(err, errBudget) {
		return br, nil
	}
	br.Converged = err == nil
	return br, err
}

// bracket moves from Start by factors of 2 until Lo meets and Hi misses, or
// a scale bound is reached.
func (b Bisection) bracket(br *Bracket, eval func(float64) (bool, error)) error {
	ok, err := eval(b.Start)
	if err != nil {
		return err
	}
	if ok {
		br.Lo = b.Start
		for br.Lo < b.MaxScale {
			s := min(2*br.Lo, b.MaxScale)
			if ok, err = eval(s); err != nil {
				return err
			}
			if !ok {
				br.Hi = s
				return nil
			}
			br.Lo = s
		}
		return nil
	}
	br.Hi = b.Start
	for br.Hi > b.MinScale {
		s := max(br.Hi/2, b.MinScale)
		if ok, err = eval(s); err != nil {
			return err
		}
		if ok {
			br.Lo = s
			return nil
		}
		br.Hi = s
	}
	return nil
}

// bisect narrows a bracket with both ends finite and positive.
func (b Bisection) bisect(br *Bracket, eval func(float64) (bool, error)) error {
	if br.Lo == 0 || math.IsInf(br.Hi, 1) {
		return nil
	}
	for br.Hi/br.Lo-1 >= b.Tolerance {
		s := math.Sqrt(br.Lo * br.Hi)
		ok, err := eval(s)
		if err != nil {
			return err
		}
		if ok {
			br.Lo = s
		} else {
			br.Hi = s
		}
	}
	return nil
}
