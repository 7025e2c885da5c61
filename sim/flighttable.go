package sim

import "iter"

// flightChunk is how many flights a chunk of the table holds: 2⁹ of
// about 330 bytes, 170 kB, small beside a run's other start-up costs.
const flightChunk = 1 << 9

// flightTable holds the flights in flight, indexed by ref, in chunks that
// never move: growing it allocates one more chunk instead of copying
// every flight, as a slice's doubling would — on a fleet with millions of
// requests in flight at once that copy was a tenth of the run — and a
// *flight stays valid while the table grows.
type flightTable struct {
	chunks [][]flight
	n      int32 // flights allocated: refs 0 … n−1
}

// at returns flight ref.
func (t *flightTable) at(ref int32) *flight {
	u := uint32(ref) // refs are never negative: shifts, not signed division
	return &t.chunks[u/flightChunk][u%flightChunk]
}

// grow adds one flight at the end and returns its ref.
func (t *flightTable) grow() int32 {
	if int(t.n) == len(t.chunks)*flightChunk {
		t.chunks = append(t.chunks, make([]flight, flightChunk))
	}
	t.n++
	return t.n - 1
}

// all yields every flight allocated, live or free, with its ref.
func (t *flightTable) all() iter.Seq2[int32, *flight] {
	return func(yield func(int32, *flight) bool) {
		for ref := range t.n {
			if !yield(ref, t.at(ref)) {
				return
			}
		}
	}
}
