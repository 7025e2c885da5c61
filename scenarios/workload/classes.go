package workload

import (
	"math/rand/v2"

	"handoff/sim"
)

// Classify returns a source that tags each request of src with a traffic
// class (sim.Request.Class), class i with probability shares[i]: a
// request's class is drawn from rng, except that every turn of a session
// takes its session's class (a hash of the session and a draw made here,
// so no state is kept per session). shares must be positive and sum to 1
// (the loader validates them); the last class takes what rounding leaves.
// A src that yields sessions stays a sim.SessionSource (a sim.Counted
// one does not stay counted, as with Scale: the run only reserves less).
func Classify(src sim.Source, shares []float64, rng *rand.Rand) sim.Source {
	c := &classified{src: src, cum: make([]float64, len(shares)), rng: rng, salt: rng.Uint64()}
	sum := 0.0
	for i, s := range shares {
		sum += s
		c.cum[i] = sum
	}
	if ss, ok := src.(sim.SessionSource); ok {
		return &classifiedSessions{classified: c, sessions: ss}
	}
	return c
}

type classified struct {
	src  sim.Source
	cum  []float64 // cumulative shares
	rng  *rand.Rand
	salt uint64
}

// Next implements sim.Source.
func (c *classified) Next(r *sim.Request) (bool, error) {
	ok, err := c.src.Next(r)
	if ok {
		c.tag(r)
	}
	return ok, err
}

// tag sets r's class: its session's, or a fresh draw.
func (c *classified) tag(r *sim.Request) {
	u := 0.0
	if r.Turn > 0 {
		u = float64(splitmix(c.salt^uint64(r.Session))>>11) / (1 << 53)
	} else {
		u = c.rng.Float64()
	}
	r.Class = uint8(len(c.cum) - 1)
	for i, cum := range c.cum[:len(c.cum)-1] {
		if u < cum {
			r.Class = uint8(i)
			break
		}
	}
}

// Clamped forwards the wrapped source's count (see Clamper).
func (c *classified) Clamped() Clamps { return ClampedCount(c.src) }

type classifiedSessions struct {
	*classified
	sessions sim.SessionSource
}

// NextTurn implements sim.SessionSource: the turn takes its session's class.
func (c *classifiedSessions) NextTurn(session int32, r *sim.Request) (int64, bool, error) {
	think, ok, err := c.sessions.NextTurn(session, r)
	if ok {
		c.tag(r)
	}
	return think, ok, err
}

// splitmix is SplitMix64's finalizer: a well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
