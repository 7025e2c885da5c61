package results

import "slices"

// A Summarizer's exact values: each latency distribution keeps its values
// as they are while they fit, so that its statistics are Summarize's.

// ExactValues is how many values each of a Summarizer's distributions
// (TTFT, TPOT, E2E, failover stall) keeps as they are, 8 B each: up to it
// (8 MiB per distribution) its statistics are Summarize's exactly; past
// it they come from the Histogram alone and the values are dropped.
const ExactValues = 1 << 20

// Expect reserves room for the exact values of n requests (at most
// ExactValues each), so that a caller who knows how many requests a run
// has spares the Summarizer's distributions their growth. It changes no
// result.
func (z *Summarizer) Expect(n int64) {
	n = min(n, int64(z.exactMax))
	if n <= 0 {
		return
	}
	for _, e := range []*exactValues{&z.ttft.exact, &z.e2e.exact, &z.tpotExact} {
		if !e.over && int64(cap(e.xs)) < n {
			e.xs = slices.Grow(e.xs, int(n)-len(e.xs))
		}
	}
}

// exactValues is a distribution's values in the order they were added,
// while there are at most a Summarizer's exactMax of them.
type exactValues struct {
	xs   []float64
	over bool // more were added: xs is dropped for good
}

// add appends x, or drops the values once there would be more than max.
func (e *exactValues) add(x float64, max int) {
	if e.over {
		return
	}
	if len(e.xs) >= max {
		e.over, e.xs = true, nil
		return
	}
	e.xs = append(e.xs, x)
}

// merge appends o's values, or drops them all if together they are more
// than max.
func (e *exactValues) merge(o *exactValues, max int) {
	switch {
	case e.over:
	case o.over || len(e.xs)+len(o.xs) > max:
		e.over, e.xs = true, nil
	default:
		e.xs = append(e.xs, o.xs...)
	}
}

// stats is statsNs of the values (a copy: statsNs reorders them), and
// whether they were all kept.
func (e *exactValues) stats() (Stats, bool) {
	if e.over {
		return Stats{}, false
	}
	return statsNs(slices.Clone(e.xs)), true
}
