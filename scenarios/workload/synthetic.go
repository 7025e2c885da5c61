package workload

import (
	"errors"
	"math"
	"math/rand/v2"

	"handoff/sim"
)

// NewSynthetic returns a source that generates s: the first request arrives
// at 0, later ones after gaps drawn from s.Arrival; each request draws its
// prompt length, then its output length, then the gap to the next request,
// all from rng (so the same seed gives the same sequence). Prompts are unique
// to each request (Prefix nil). It returns s.Validate()'s error, if any.
// Cost per request: O(1) (O(log n) for empirical lengths), no allocation.
func NewSynthetic(s Synthetic, rng *rand.Rand) (sim.Source, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &synthetic{
		maxRequests: int64(s.Requests),
		durationNs:  int64(s.Duration),
		gaps:        newGapSampler(s.Arrival, rng),
		input:       newLengthSampler(s.InputTokens),
		output:      newLengthSampler(s.OutputTokens),
		rng:         rng,
	}, nil
}

type synthetic struct {
	maxRequests   int64 // 0 = unbounded
	durationNs    int64 // 0 = unbounded
	gaps          *gapSampler
	input, output *lengthSampler
	rng           *rand.Rand
	nextID        int64
	timeNs        float64 // next arrival, unrounded
}

// MaxRequests implements sim.Counted: the request count, when no duration
// may end the workload sooner (0, no reservation, otherwise).
func (g *synthetic) MaxRequests() int {
	if g.durationNs > 0 {
		return 0
	}
	return int(g.maxRequests)
}

// Next implements sim.Source.
func (g *synthetic) Next(r *sim.Request) (bool, error) {
	if g.maxRequests > 0 && g.nextID >= g.maxRequests {
		return false, nil
	}
	if g.timeNs > maxTraceSpanNs {
		return false, errors.New("workload: synthetic arrivals passed 100 years; the rate is too low")
	}
	arrivalNs := int64(math.Round(g.timeNs))
	if g.durationNs > 0 && arrivalNs >= g.durationNs {
		return false, nil
	}
	*r = sim.Request{
		ID:           g.nextID,
		ArrivalNs:    arrivalNs,
		PromptTokens: g.input.draw(g.rng),
		OutputTokens: g.output.draw(g.rng),
	}
	g.nextID++
	g.timeNs += g.gaps.draw()
	return true, nil
}
