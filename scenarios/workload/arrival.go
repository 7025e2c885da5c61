package workload

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// gapSampler draws inter-arrival gaps in ns for a validated Arrival. Cost per
// draw: O(1), no allocation.
type gapSampler struct {
	process string
	meanNs  float64
	gamma   distuv.Gamma
	rng     *rand.Rand
}

func newGapSampler(a Arrival, rng *rand.Rand) *gapSampler {
	g := &gapSampler{process: a.Process, meanNs: 1e9 / float64(a.Rate), rng: rng}
	if a.Process == ProcessGamma {
		// Gamma with shape k and rate β has mean k/β and CV 1/√k: so
		// k = 1/cv² and β = k/mean gives mean 1/Rate and the requested CV.
		k := 1 / (a.CV * a.CV)
		g.gamma = distuv.Gamma{Alpha: k, Beta: k / g.meanNs, Src: rng}
	}
	return g
}

// draw returns one gap, ns (fractional: the caller accumulates in float64 and
// rounds each arrival, so rounding does not bias the rate).
func (g *gapSampler) draw() float64 {
	switch g.process {
	case ProcessPoisson:
		return g.rng.ExpFloat64() * g.meanNs
	case ProcessGamma:
		return g.gamma.Rand()
	}
	return g.meanNs // constant
}
