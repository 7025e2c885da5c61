package workload

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
)

// Validate checks l as a length of at least 1 (tokens, turns); errors
// name fields relative to l ("stddev: ..."). Fields the distribution does
// not use must be left unset.
func (l Length) Validate() error { return l.validate(1) }

// ValidateTime checks l as a time in ms, which may be 0 (a think time:
// an omitted one is 0, so {dist: fixed, value: 0} says the same).
func (l Length) ValidateTime() error { return l.validate(0) }

// validate checks l as a quantity of at least floor (0 or 1).
func (l Length) validate(floor int) error {
	var errs []error
	add := func(field, format string, args ...any) { errs = append(errs, fieldErr(field, format, args...)) }
	switch l.Dist {
	case DistFixed:
		if l.Value < floor || l.Value > maxTokens {
			add("value", "must be in [%d, %d], got %d", floor, maxTokens, l.Value)
		}
	case DistUniform:
		if l.Min < floor {
			add("min", "must be ≥ %d, got %d", floor, l.Min)
		}
		if l.Max < l.Min || l.Max > maxTokens {
			add("max", "must be in [min, %d], got %d", maxTokens, l.Max)
		}
	case DistNormal, DistLognormal:
		errs = append(errs, l.validateMoments()...)
	case DistEmpirical:
		errs = append(errs, l.validateEmpirical(floor)...)
	default:
		add("dist", "%q is not one of %s", l.Dist, strings.Join(Dists(), ", "))
	}
	errs = append(errs, l.unusedFields()...)
	return errors.Join(errs...)
}

func (l Length) validateMoments() []error {
	var errs []error
	if !(l.Mean > 0) || l.Mean > maxTokens {
		errs = append(errs, fieldErr("mean", "must be in (0, %d], got %g", maxTokens, l.Mean))
	}
	if !(l.Stddev >= 0) || l.Stddev > maxTokens {
		errs = append(errs, fieldErr("stddev", "must be ≥ 0 and at most %d, got %g", maxTokens, l.Stddev))
	}
	if l.Min < 0 {
		errs = append(errs, fieldErr("min", "must be ≥ 0, got %d", l.Min))
	}
	if l.Max != 0 && (l.Max < max(1, l.Min) || l.Max > maxTokens) {
		errs = append(errs, fieldErr("max", "must be 0 (unbounded) or in [max(1, min), %d], got %d", maxTokens, l.Max))
	}
	return errs
}

func (l Length) validateEmpirical(floor int) []error {
	var errs []error
	if len(l.Values) == 0 {
		errs = append(errs, fieldErr("values", "must list at least one length"))
	}
	for i, v := range l.Values {
		if v < floor || v > maxTokens {
			errs = append(errs, fieldErr("values", "[%d] must be in [%d, %d], got %d", i, floor, maxTokens, v))
		}
	}
	if len(l.Weights) == 0 {
		return errs
	}
	if len(l.Weights) != len(l.Values) {
		errs = append(errs, fieldErr("weights", "has %d entries, values has %d", len(l.Weights), len(l.Values)))
	}
	sum := 0.0
	for i, w := range l.Weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			errs = append(errs, fieldErr("weights", "[%d] must be ≥ 0 and finite, got %g", i, w))
		}
		sum += w
	}
	if !(sum > 0) {
		errs = append(errs, fieldErr("weights", "must not all be 0"))
	}
	return errs
}

// unusedFields reports fields set that l.Dist ignores, which are likely mistakes.
func (l Length) unusedFields() []error {
	used := lengthFields[l.Dist]
	if used == nil {
		return nil
	}
	set := []struct {
		name string
		set  bool
	}{
		{"value", l.Value != 0}, {"min", l.Min != 0}, {"max", l.Max != 0},
		{"mean", l.Mean != 0}, {"stddev", l.Stddev != 0},
		{"values", l.Values != nil}, {"weights", l.Weights != nil},
	}
	var errs []error
	for _, f := range set {
		if f.set && !contains(used, f.name) {
			errs = append(errs, fieldErr(f.name, "not used by dist %s", l.Dist))
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lengthSampler draws from a validated Length. Cost per draw: O(1), or
// O(log n) for an empirical distribution of n values; no allocation.
type lengthSampler struct {
	dist      string
	lo, hi    int     // inclusive bounds after rounding (hi = maxTokens when unbounded)
	mu, sigma float64 // normal: of the length; lognormal: of its logarithm
	values    []int
	cum       []float64 // empirical: cumulative weights
}

// newLengthSampler returns the sampler of l, validated by Validate: it
// draws lengths ≥ 1.
func newLengthSampler(l Length) *lengthSampler { return newSampler(l, 1) }

// newTimeSampler returns the sampler of l, validated by ValidateTime: it
// draws times ≥ 0.
func newTimeSampler(l Length) *lengthSampler { return newSampler(l, 0) }

// newSampler returns the sampler of l, drawing values ≥ floor.
func newSampler(l Length, floor int) *lengthSampler {
	s := &lengthSampler{dist: l.Dist, lo: max(floor, l.Min), hi: l.Max, mu: l.Mean, sigma: l.Stddev}
	if s.hi == 0 {
		s.hi = maxTokens
	}
	switch l.Dist {
	case DistFixed:
		s.lo, s.hi = l.Value, l.Value
	case DistLognormal:
		// For a length X with mean m and stddev d, ln X is normal with
		// σ² = ln(1 + d²/m²) and μ = ln m − σ²/2 (so that E[X] = e^{μ+σ²/2} = m).
		v := math.Log1p(l.Stddev * l.Stddev / (l.Mean * l.Mean))
		s.mu, s.sigma = math.Log(l.Mean)-v/2, math.Sqrt(v)
	case DistEmpirical:
		s.values = l.Values
		s.cum = make([]float64, len(l.Values))
		total := 0.0
		for i := range l.Values {
			w := 1.0
			if len(l.Weights) > 0 {
				w = l.Weights[i]
			}
			total += w
			s.cum[i] = total
		}
	}
	return s
}

// draw returns one value ≥ the sampler's floor.
func (s *lengthSampler) draw(rng *rand.Rand) int {
	switch s.dist {
	case DistUniform:
		return s.lo + rng.IntN(s.hi-s.lo+1)
	case DistNormal:
		return s.clamp(s.mu + s.sigma*rng.NormFloat64())
	case DistLognormal:
		return s.clamp(math.Exp(s.mu + s.sigma*rng.NormFloat64()))
	case DistEmpirical:
		return s.values[s.pick(rng.Float64()*s.cum[len(s.cum)-1])]
	}
	return s.lo // fixed
}

// clamp rounds x to the nearest integer within [lo, hi].
func (s *lengthSampler) clamp(x float64) int {
	x = math.Round(x)
	switch {
	case !(x >= float64(s.lo)): // also NaN
		return s.lo
	case x > float64(s.hi):
		return s.hi
	}
	return int(x)
}

// pick returns the first index whose cumulative weight exceeds u.
func (s *lengthSampler) pick(u float64) int {
	lo, hi := 0, len(s.cum)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
