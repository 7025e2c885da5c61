package kv

import (
	"math/rand/v2"
	"testing"
)

// TestWatchFirstBlocksMatchesPeek drives pools as TestPoolRandomOps does
// and checks after every step that the first blocks the watcher was told
// are cached are exactly those a look-up finds.
func TestWatchFirstBlocksMatchesPeek(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 98))
		w := &propWorld{r: r, p: NewPool(8+r.IntN(40), 1+r.IntN(5), true)}
		watched, firsts := map[uint64]bool{}, map[uint64]bool{}
		w.p.WatchFirstBlocks(func(h uint64, cached bool) {
			if watched[h] == cached {
				t.Fatalf("seed %d: hash %x reported cached=%v twice", seed, h, cached)
			}
			watched[h] = cached
		})
		for step := range 1500 {
			switch k := r.IntN(10); {
			case k < 3 || len(w.seqs) == 0:
				w.admit()
			case k < 8:
				w.grow(r.IntN(len(w.seqs)))
			default:
				w.finish(r.IntN(len(w.seqs)))
			}
			for _, s := range w.seqs {
				if len(s.hashes) > 0 {
					firsts[s.hashes[0]] = true
				}
			}
			for h := range firsts {
				if cached := w.p.Peek([]uint64{h}) > 0; watched[h] != cached {
					t.Fatalf("seed %d step %d: first block %x cached %v, watcher told %v", seed, step, h, cached, watched[h])
				}
			}
			for h, cached := range watched {
				if cached && !firsts[h] {
					t.Fatalf("seed %d step %d: %x reported as a first block", seed, step, h)
				}
			}
		}
	}
}
