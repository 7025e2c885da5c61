package openmetrics

// grow makes room for n points in every slice of s.
func (s *series) grow(n int) {
	if len(s.prompt) >= n {
		return
	}
	for h := range s.hists {
		hs := &s.hists[h]
		hs.counts = extend(hs.counts, n*(len(hs.bounds)+1))
		hs.sums = extend(hs.sums, n)
	}
	s.prompt, s.gen = extend(s.prompt, n), extend(s.gen, n)
	for k := range s.success {
		s.success[k] = extend(s.success[k], n)
	}
}

// extend returns xs grown with zeros to n elements.
func extend[T any](xs []T, n int) []T {
	if len(xs) >= n {
		return xs
	}
	return append(xs, make([]T, n-len(xs))...)
}

// coarsen doubles the grid's interval: point j of the new grid holds what
// points 2j−1 and 2j of the old held (point 0, only what happened at 0).
func (r *Recorder) coarsen() {
	for i := range r.series {
		s := &r.series[i]
		for h := range s.hists {
			hs := &s.hists[h]
			hs.counts = halve(hs.counts, len(hs.bounds)+1)
			hs.sums = halve(hs.sums, 1)
		}
		s.prompt, s.gen = halve(s.prompt, 1), halve(s.gen, 1)
		for k := range s.success {
			s.success[k] = halve(s.success[k], 1)
		}
	}
	r.intervalNs *= 2
}

// halve merges a point-major slice of width w onto a grid of half as
// many points, in place.
func halve[T uint32 | int64 | float64](xs []T, w int) []T {
	n := len(xs) / w
	if n == 0 {
		return xs
	}
	m := n/2 + 1 // old point n−1 goes to ⌈(n−1)/2⌉ = ⌊n/2⌋
	for j := 1; j < m; j++ {
		for b := range w {
			v := xs[(2*j-1)*w+b]
			if 2*j < n {
				v += xs[2*j*w+b]
			}
			xs[j*w+b] = v
		}
	}
	clear(xs[m*w:])
	return xs[:m*w]
}

// Gauges sets engine e's gauges from its timeline's samples, in time
// order, on a grid whose interval divides the Recorder's (a timeline
// sampled every intervalNs): the grid coarsens to that interval first if
// it is the coarser, and samples off the Recorder's grid only add their
// preemptions to the next one on it. Call it for every engine once all
// records are in.
func (r *Recorder) Gauges(e int, intervalNs int64, samples []Sample) {
	for r.intervalNs < intervalNs {
		r.coarsen()
	}
	s := &r.series[e]
	var preempt int64
	for _, x := range samples {
		preempt += int64(x.Preemptions)
		if x.AtNs%r.intervalNs != 0 {
			continue
		}
		k := int(x.AtNs / r.intervalNs)
		s.running, s.waiting = extend(s.running, k+1), extend(s.waiting, k+1)
		s.kv, s.preempt = extend(s.kv, k+1), extend(s.preempt, k+1)
		s.running[k], s.waiting[k], s.kv[k], s.preempt[k] = x.Running, x.Waiting, x.KVUsed, preempt
	}
}
