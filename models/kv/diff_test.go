package kv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// appendQueue appends p's free queue, head to tail, to dst: the live ring
// entries in ring order, with the fresh blocks in ID order after the first
// hLen of them.
func (p *Pool) appendQueue(dst []BlockID) []BlockID {
	for i, s := 0, p.qHead; i <= p.qLen; i, s = i+1, p.next(s) {
		if i == p.hLen {
			for b := range p.fresh {
				dst = append(dst, BlockID(len(p.blocks)+b))
			}
		}
		if i == p.qLen {
			break
		}
		switch b := p.queue[s]; {
		case b < 0: // a run of placeholders
			for range -b {
				dst = append(dst, anonEntry)
			}
		case p.blocks[b].pos == uint32(s):
			dst = append(dst, b)
		}
	}
	return dst
}

// diffSeq is a sequence in the differential test: its block table (the same
// in both pools) and the hashes of its blocks, committed or not.
type diffSeq struct {
	table  []BlockID
	hashes []uint64
	shared int // leading hashes from a shared prompt, never committed privately
	policy int // for the others: 0 commit shared, 1 private, 2 by a hash bit
}

// diffWorld drives a Pool and a refPool with the same operations and fails
// as soon as any result or any observable state differs.
type diffWorld struct {
	r       *rand.Rand
	p       *Pool
	ref     *refPool
	prompts [4][]uint64 // shared prefixes, 1–6 blocks
	seqs    []*diffSeq  // running
	gone    []*diffSeq  // preempted: their blocks may still hold their hashes
	ctr     uint64
	err     error     // first divergence
	q, rq   []BlockID // free queue buffers for compare
}

func newDiffWorld(seed uint64) *diffWorld {
	r := rand.New(rand.NewPCG(seed, 7))
	n, caching := 1+r.IntN(48), r.IntN(5) != 0
	w := &diffWorld{r: r, p: NewPool(n, 1, caching), ref: newRefPool(n, caching)}
	for i := range w.prompts {
		w.prompts[i] = w.fresh(nil, 1+r.IntN(6))
	}
	return w
}

// fresh appends k never-seen hashes to hs.
func (w *diffWorld) fresh(hs []uint64, k int) []uint64 {
	for range k {
		w.ctr++
		hs = append(hs, mix64(w.ctr)|1)
	}
	return hs
}

// same records a divergence if got != want.
func same[T comparable](w *diffWorld, what string, got, want T) {
	if got != want && w.err == nil {
		w.err = fmt.Errorf("%s: ring %v, reference %v", what, got, want)
	}
}

// sameTable records a divergence if the tables differ.
func sameTable(w *diffWorld, what string, got, want []BlockID) {
	if !slices.Equal(got, want) && w.err == nil {
		w.err = fmt.Errorf("%s: ring %v, reference %v", what, got, want)
	}
}

// allocate extends s by n blocks in both pools.
func (w *diffWorld) allocate(s *diffSeq, n int) bool {
	t, ok := w.p.Allocate(s.table, n)
	rt, rok := w.ref.Allocate(slices.Clone(s.table), n)
	same(w, "Allocate ok", ok, rok)
	sameTable(w, "Allocate", t, rt)
	s.table = t
	return ok
}

// commit commits s's blocks from..len(hashes) in both pools, or, one time
// in four, none of them (they stay uncached). Each hash is always committed
// the same way, as an engine does: the shared prompt's in the index, the
// others as s.policy says.
func (w *diffWorld) commit(s *diffSeq, from int) {
	if w.r.IntN(4) == 0 {
		return
	}
	for i := from; i < len(s.hashes) && i < len(s.table); i++ {
		switch b, h := s.table[i], s.hashes[i]; {
		case i < s.shared || s.policy == 0 || s.policy == 2 && h&2 == 0:
			w.p.Commit(s.table, i, h)
			w.ref.Commit(b, h)
		default:
			w.p.CommitPrivate(s.table, i, h)
			w.ref.CommitPrivate(b, h)
		}
	}
}

// admit starts a sequence: a shared prompt (or part of it) plus unique
// blocks; Match, Acquire the hit, Allocate the rest, commit. With blind set
// it skips Match, so its shared commits race the cached copies (first writer
// wins).
func (w *diffWorld) admit(blind bool) {
	pr := w.prompts[w.r.IntN(len(w.prompts))]
	s := &diffSeq{shared: 1 + w.r.IntN(len(pr)), policy: w.r.IntN(3)}
	s.hashes = w.fresh(slices.Clone(pr[:s.shared]), w.r.IntN(8))
	hit := 0
	if !blind {
		hit = w.p.Match(s.hashes)
		same(w, "Match", hit, w.ref.Match(s.hashes))
	}
	need := len(s.hashes) - hit + w.r.IntN(2) // maybe a partial last block
	among := w.p.FreeAmong(s.hashes[:hit])
	same(w, "FreeAmong", among, w.ref.FreeAmong(s.hashes[:hit]))
	if need > w.p.FreeBlocks()-among {
		if w.r.IntN(2) == 0 {
			w.allocate(&diffSeq{}, need+among) // fails unless it fits without the hit
		}
		return
	}
	s.table = w.p.Acquire(nil, s.hashes[:hit])
	sameTable(w, "Acquire", s.table, w.ref.Acquire(nil, s.hashes[:hit]))
	w.allocate(s, need)
	w.commit(s, hit)
	w.seqs = append(w.seqs, s)
}

// grow decodes one block onto a running sequence, preempting it when the
// pool is full.
func (w *diffWorld) grow() {
	i := w.r.IntN(len(w.seqs))
	s := w.seqs[i]
	if !w.allocate(s, 1) {
		w.finish(i, true)
		return
	}
	from := len(s.hashes) // the block that was partial, if any, is now full
	s.hashes = w.fresh(s.hashes, len(s.table)-from)
	w.commit(s, from)
}

// finish frees running sequence i in both pools, remembering it for a later
// resume if preempted.
func (w *diffWorld) finish(i int, preempted bool) {
	s := w.seqs[i]
	w.p.Free(s.table)
	w.ref.Free(s.table)
	w.seqs = slices.Delete(w.seqs, i, i+1)
	if preempted {
		w.gone = append(w.gone, s)
	}
}

// resume restarts a preempted sequence: Held, AcquireBlocks of what
// survived, Allocate the rest, commit it privately.
func (w *diffWorld) resume() {
	i := w.r.IntN(len(w.gone))
	old := w.gone[i]
	w.gone = slices.Delete(w.gone, i, i+1)
	held := w.p.Held(old.table, old.hashes)
	same(w, "Held", held, w.ref.Held(old.table, old.hashes))
	among := w.p.FreeAmongBlocks(old.table[:held])
	same(w, "FreeAmongBlocks", among, w.ref.FreeAmongBlocks(old.table[:held]))
	need := len(old.table) - held
	if need > w.p.FreeBlocks()-among {
		return
	}
	s := &diffSeq{hashes: old.hashes, shared: old.shared, policy: old.policy}
	s.table = w.p.AcquireBlocks(nil, old.table[:held])
	sameTable(w, "AcquireBlocks", s.table, w.ref.AcquireBlocks(nil, old.table[:held]))
	w.allocate(s, need)
	w.commit(s, held)
	w.seqs = append(w.seqs, s)
}

// op runs one random operation.
func (w *diffWorld) op() {
	switch k := w.r.IntN(20); {
	case k < 5 || len(w.seqs) == 0 && len(w.gone) == 0:
		w.admit(false)
	case k < 6:
		w.admit(true)
	case k < 10 && len(w.seqs) > 0:
		w.grow()
	case k < 13 && len(w.seqs) > 0:
		w.finish(w.r.IntN(len(w.seqs)), w.r.IntN(2) == 0)
	case k < 17 && len(w.gone) > 0:
		w.resume()
	case k < 18:
		hs := w.fresh(slices.Clone(w.prompts[w.r.IntN(len(w.prompts))]), 1)
		same(w, "Peek", w.p.Peek(hs), w.ref.Peek(hs))
	default:
		w.allocate(&diffSeq{}, 0)
	}
}

// compare records a divergence in any observable state, or a failed Check.
func (w *diffWorld) compare() {
	p, ref := w.p, w.ref
	same(w, "FreeBlocks", p.FreeBlocks(), ref.numFree)
	same(w, "UsedBlocks", p.UsedBlocks(), len(ref.nodes)-1-ref.numFree)
	same(w, "CachedBlocks", p.CachedBlocks(), ref.cached.len())
	same(w, "Stats", p.Stats(), ref.stats)
	w.q, w.rq = p.appendQueue(w.q[:0]), ref.appendQueue(w.rq[:0])
	sameTable(w, "free queue", w.q, w.rq)
	for b, blk := range p.blocks {
		r := ref.nodes[b]
		if (blk.hash != r.hash || blk.refs != r.refs || blk.private != r.private) && w.err == nil {
			w.err = fmt.Errorf("block %d: ring has hash %#x, refcount %d, private %v; reference %#x, %d, %v",
				b, blk.hash, blk.refs, blk.private, r.hash, r.refs, r.private)
		}
	}
	if err := p.Check(); err != nil && w.err == nil {
		w.err = err
	}
}

// TestPoolMatchesReference holds the ring-queue Pool to the linked-list
// refPool's observable behaviour: over many random operation sequences on
// small pools (admissions with prefix hits, blind commits that lose to the
// first writer, decode growth, frees, preemption and resume through Held and
// AcquireBlocks), every result and the whole state — free queue order,
// per-block hashes and refcounts, counters — must agree after every step.
func TestPoolMatchesReference(t *testing.T) {
	seeds, steps := uint64(1500), 300
	if testing.Short() || raceEnabled {
		seeds = 200
	}
	for seed := range seeds {
		w := newDiffWorld(seed)
		for step := range steps {
			w.op()
			w.compare()
			if w.err != nil {
				t.Fatalf("seed %d step %d (pool of %d): %v", seed, step, w.p.NumBlocks(), w.err)
			}
		}
	}
}

// TestRingCompaction takes free cached blocks out of the middle of the queue
// until the stale entries outnumber the live ones, and checks that the ring
// is compacted (stale entries dropped, order kept) and stays within bounds.
// Pool of 8, all committed and freed: queue 7 6 5 4 3 2 1 0 (Free walks
// back to front). Acquiring 6, 4, 2, 0, 5 leaves 5 stale and 3 live
// entries, so the fifth acquisition compacts to the 3 live: 7 3 1.
func TestRingCompaction(t *testing.T) {
	p := NewPool(8, 1, true)
	tab, _ := p.Allocate(nil, 8)
	hs := make([]uint64, 8)
	for i := range tab {
		hs[i] = uint64(100 + i)
		p.Commit(tab, i, hs[i])
	}
	p.Free(tab)
	for i, b := range []int{6, 4, 2, 0, 5} {
		p.Acquire(nil, hs[b:b+1])
		if err := p.Check(); err != nil {
			t.Fatalf("after acquisition %d: %v", i+1, err)
		}
		if want := 8; i < 4 && p.qLen != want {
			t.Errorf("after acquisition %d: ring length %d, want %d (no compaction yet)", i+1, p.qLen, want)
		}
	}
	if got, want := p.appendQueue(nil), []BlockID{7, 3, 1}; !slices.Equal(got, want) || p.qLen != 3 {
		t.Errorf("queue %v (ring length %d), want %v (3)", got, p.qLen, want)
	}
	got, _ := p.Allocate(nil, 3)
	if want := []BlockID{7, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("allocation order %v, want %v", got, want)
	}
}
