package workload

import (
	"math"

	"handoff/sim"
)

// Scale returns a source that replays src at rateScale times its rate:
// every ArrivalNs is divided by rateScale (2 = twice the rate, arrivals
// twice as dense) and rounded to the nearest ns, which keeps arrivals
// non-decreasing. Request contents are unchanged. rateScale 1 returns src.
// Panics if rateScale is not positive and finite (the loader validates it).
func Scale(src sim.Source, rateScale float64) sim.Source {
	if !(rateScale > 0) || math.IsInf(rateScale, 0) {
		panic("workload: rate scale must be positive and finite")
	}
	if rateScale == 1 {
		return src
	}
	return &scaled{src: src, scale: rateScale}
}

type scaled struct {
	src   sim.Source
	scale float64
}

// Next implements sim.Source.
func (s *scaled) Next(r *sim.Request) (bool, error) {
	ok, err := s.src.Next(r)
	if ok {
		r.ArrivalNs = int64(math.Round(float64(r.ArrivalNs) / s.scale))
	}
	return ok, err
}

// Clamped forwards the wrapped source's count (see Clamper).
func (s *scaled) Clamped() Clamps { return ClampedCount(s.src) }

// Limit returns a source that yields at most the first n requests of src
// (then reports exhaustion without reading further). n ≤ 0 means no limit
// and returns src, matching Trace.Limit's 0.
func Limit(src sim.Source, n int) sim.Source {
	if n <= 0 {
		return src
	}
	return &limited{src: src, left: n}
}

type limited struct {
	src  sim.Source
	left int
}

// Next implements sim.Source.
func (l *limited) Next(r *sim.Request) (bool, error) {
	if l.left <= 0 {
		return false, nil
	}
	ok, err := l.src.Next(r)
	if ok {
		l.left--
	}
	return ok, err
}

// Clamped forwards the wrapped source's count (see Clamper).
func (l *limited) Clamped() Clamps { return ClampedCount(l.src) }
