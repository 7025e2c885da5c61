package calibrate

import "math"

// weightedSquares accumulates a weighted mean square of relative errors.
// A figure the simulation did not produce (sim ≤ 0), or one not measured,
// counts as a 100% error.
type weightedSquares struct{ sum, weights float64 }

func (w *weightedSquares) add(weight, sim, meas float64) {
	e := 1.0
	if meas > 0 && sim > 0 {
		e = (sim - meas) / meas
	}
	w.sum += weight * e * e
	w.weights += weight
}

// mean is the weighted mean square, 0 with nothing added.
func (w *weightedSquares) mean() float64 {
	if w.weights == 0 {
		return 0
	}
	return w.sum / w.weights
}

// relErrors accumulates the relative errors (sim − meas)/meas of a metric
// over runs, for their mean absolute and mean signed values.
type relErrors struct {
	n           int
	abs, signed float64
}

func (r *relErrors) add(sim, meas float64) {
	e := (sim - meas) / meas
	r.n++
	r.abs += math.Abs(e)
	r.signed += e
}

// mean returns the count, the mean absolute and the mean signed error (0
// and 0 with none).
func (r *relErrors) mean() (n int, mae, signed float64) {
	if r.n == 0 {
		return 0, 0, 0
	}
	return r.n, r.abs / float64(r.n), r.signed / float64(r.n)
}
