package perf

import (
	"math"
	"testing"

	"handoff/models/llm"
)

// fitFactors grid-searches, for one device over all its included points
// (both phases, every TP), the MFU, MBU and step overhead that minimise the
// mean absolute percentage error: a coarse pass (MFU and MBU in steps of
// 0.05 over [0.10, 1.00], overhead in 1 ms steps over [0, 80] ms), then a
// fine pass around the best (0.01 and 0.1 ms steps). Ties keep the first
// (smallest) value, so the result is deterministic. mbuMax caps the MBU.
func fitFactors(t testing.TB, m *llm.Model, d *deviceSetup, mbuMax float64) factors {
	coarse := fitSearch(t, m, d, span(0.10, 1.00, 0.05), span(0.10, mbuMax, 0.05), nsSpan(0, 80e6, 1e6))
	mfuLo, mbuLo := math.Max(0.01, coarse.mfu-0.05), math.Max(0.01, coarse.mbu-0.05)
	oLo := max(0, coarse.overheadNs-1e6)
	return fitSearch(t, m, d, span(mfuLo, math.Min(1, coarse.mfu+0.05), 0.01),
		span(mbuLo, math.Min(mbuMax, coarse.mbu+0.05), 0.01), nsSpan(oLo, coarse.overheadNs+1e6, 1e5))
}

// fitSearch returns the factors on the given grid with the lowest MAPE.
// The overhead is additive, so each (MFU, MBU) pair is priced once without
// it and the overheads are swept over those base times.
func fitSearch(t testing.TB, m *llm.Model, d *deviceSetup, mfus, mbus []float64, overheads []int64) factors {
	var meas, base []float64
	for _, p := range d.pts {
		if !p.excluded {
			meas = append(meas, p.prefillMs*1e6, p.decodeMs*1e6)
		}
	}
	base = make([]float64, len(meas))
	best, bestErr := factors{}, math.Inf(1)
	for _, mfu := range mfus {
		for _, mbu := range mbus {
			fitBase(t, m, d, factors{mfu, mbu, 0}, base)
			for _, o := range overheads {
				e := mapeWith(base, meas, float64(o))
				if e < bestErr-1e-12 {
					best, bestErr = factors{mfu, mbu, o}, e
				}
			}
		}
	}
	return best
}

// fitBase writes the roofline times (ns, before overhead) of d's included
// points into base, prefill and decode interleaved.
func fitBase(t testing.TB, m *llm.Model, d *deviceSetup, f factors, base []float64) {
	rl := map[int]*Roofline{}
	i := 0
	for _, p := range d.pts {
		if p.excluded {
			continue
		}
		r := rl[p.tp]
		if r == nil {
			r = newRooflineFor(t, m, d, p.tp, f)
			rl[p.tp] = r
		}
		base[i], base[i+1] = r.stepNs(&p.prefillBatch), r.stepNs(&p.decodeBatch)
		i += 2
	}
}

func mapeWith(base, meas []float64, overheadNs float64) float64 {
	var s float64
	for i := range base {
		s += math.Abs(base[i]+overheadNs-meas[i]) / meas[i]
	}
	return s / float64(len(base))
}

// span returns lo, lo+step, ... up to hi (inclusive), rounded to 1e-9 so the
// values print exactly.
func span(lo, hi, step float64) []float64 {
	var out []float64
	for i := 0; ; i++ {
		x := math.Round((lo+float64(i)*step)*1e9) / 1e9
		if x > hi+1e-9 {
			return out
		}
		out = append(out, x)
	}
}

func nsSpan(lo, hi, step int64) []int64 {
	var out []int64
	for x := lo; x <= hi; x += step {
		out = append(out, x)
	}
	return out
}
