package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Streams derives independent random streams from one master seed: each
// component asks for its own by name, so adding a component (or drawing more
// from one) never shifts the numbers another one sees.
type Streams struct {
	seed uint64
}

// NewStreams returns the stream factory for a master seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed} }

// Stream returns a fresh generator for name; the same (seed, name) always
// yields the same sequence.
func (s Streams) Stream(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(s.seed, h.Sum64()))
}
