package kv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// settledSeq is one sequence in TestFreeSettledMatchesEagerCommit: its full
// blocks' hashes (the first shared of them from a shared prompt) and its
// block table in each pool, which may end with one partial block.
type settledSeq struct {
	hashes       []uint64
	shared       int
	lazy, eager  []BlockID
	partial      bool
	settledUntil int // lazy pool: leading blocks that carry their hash
	pending      int // lazy pool: blocks allocated as a count, not yet claimed into the table

	// A sliding-window group's blocks: a count in the lazy pool
	// (AllocateAnonymous, FreeCounted), a table in the eager one, whose
	// blocks but the last (when winPartial) hold content.
	win        int
	eagerWin   []BlockID
	winPartial bool
}

// settledWorld drives two pools through the same sequences: eager commits
// every full block (shared ones to the index, the rest privately) and frees
// with Free, as an engine without lazy hashing would; lazy hashes private
// blocks only when a preemption needs them and frees finished sequences
// with FreeSettled, whose blocks become anonymous, and sometimes takes
// blocks as counts (AllocateAnonymous, Claim). Block IDs may differ between
// the two; nothing observable may.
type settledWorld struct {
	r           *rand.Rand
	lazy, eager *Pool
	prompts     [3][]uint64
	seqs, gone  []*settledSeq
	ctr         uint64
	err         error
	owned       int // most anonymous blocks the lazy pool's tables held at once
}

func (w *settledWorld) fresh(k int) []uint64 {
	hs := make([]uint64, k)
	for i := range hs {
		w.ctr++
		hs[i] = mix64(w.ctr) | 1
	}
	return hs
}

func (w *settledWorld) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

// commit records s's full blocks from..len(hashes): shared ones in both
// pools' index, private ones in the eager pool only.
func (w *settledWorld) commit(s *settledSeq, from int) {
	for i := from; i < len(s.hashes); i++ {
		if i < s.shared {
			w.lazy.Commit(s.lazy, i, s.hashes[i])
			w.eager.Commit(s.eager, i, s.hashes[i])
		} else {
			w.eager.CommitPrivate(s.eager, i, s.hashes[i])
		}
	}
	s.settledUntil = max(s.settledUntil, min(len(s.hashes), s.shared))
}

// allocate extends both tables by n blocks; both must agree on success.
// With mayCount, the lazy pool sometimes allocates them as a count
// (AllocateAnonymous), claimed into the table only when the table is next
// read, as the engine does for a cruising sequence.
func (w *settledWorld) allocate(s *settledSeq, n int) bool {
	return w.allocateMaybeCounted(s, n, false)
}

func (w *settledWorld) allocateMaybeCounted(s *settledSeq, n int, mayCount bool) bool {
	if mayCount && w.r.IntN(2) == 0 {
		lok := w.lazy.AllocateAnonymous(n)
		e, eok := w.eager.Allocate(s.eager, n)
		if lok != eok {
			w.fail("AllocateAnonymous(%d): lazy %v, eager %v", n, lok, eok)
		}
		if lok {
			s.pending += n
		}
		s.eager = e
		return lok && eok
	}
	w.claim(s)
	l, lok := w.lazy.Allocate(s.lazy, n)
	e, eok := w.eager.Allocate(s.eager, n)
	if lok != eok {
		w.fail("Allocate(%d): lazy %v, eager %v", n, lok, eok)
	}
	s.lazy, s.eager = l, e
	return lok && eok
}

func (w *settledWorld) admit() {
	pr := w.prompts[w.r.IntN(len(w.prompts))]
	s := &settledSeq{shared: 1 + w.r.IntN(len(pr)), partial: w.r.IntN(2) == 0}
	s.hashes = append(slices.Clone(pr[:s.shared]), w.fresh(w.r.IntN(6))...)
	hit := w.lazy.Match(s.hashes)
	if e := w.eager.Match(s.hashes); e != hit {
		w.fail("Match: lazy %d, eager %d", hit, e)
	}
	need := len(s.hashes) - hit
	if s.partial {
		need++
	}
	la, ea := w.lazy.FreeAmong(s.hashes[:hit]), w.eager.FreeAmong(s.hashes[:hit])
	if la != ea {
		w.fail("FreeAmong: lazy %d, eager %d", la, ea)
	}
	if need > w.lazy.FreeBlocks()-la {
		return
	}
	s.lazy = w.lazy.Acquire(nil, s.hashes[:hit])
	s.eager = w.eager.Acquire(nil, s.hashes[:hit])
	w.allocate(s, need)
	w.commit(s, hit)
	w.seqs = append(w.seqs, s)
}

// grow decodes one block: a partial last block fills up and a new partial
// one starts, or a new full block is added. A full pool preempts the
// sequence.
func (w *settledWorld) grow() {
	i := w.r.IntN(len(w.seqs))
	s := w.seqs[i]
	if !w.allocateMaybeCounted(s, 1, true) {
		w.stop(i, true)
		return
	}
	from := len(s.hashes) // the old partial block, or the new full one
	s.hashes = append(s.hashes, w.fresh(1)...)
	w.commit(s, from)
}

// claim appends the lazy pool's blocks s holds as a count to its table.
func (w *settledWorld) claim(s *settledSeq) {
	s.lazy = w.lazy.Claim(s.lazy, s.pending)
	s.pending = 0
}

// window gives s's sliding-window group n more blocks, the last of them
// perhaps partial: a count in the lazy pool, a table in the eager one.
func (w *settledWorld) window(s *settledSeq, n int) {
	if n == 0 || n > w.lazy.FreeBlocks() {
		return
	}
	w.lazy.AllocateAnonymous(n)
	s.eagerWin, _ = w.eager.Allocate(s.eagerWin, n)
	s.win += n
	s.winPartial = w.r.IntN(2) == 0
}

// slide frees the first k of s's window blocks (full ones), as a
// sliding-window group frees what slid out of its window: the lazy pool
// by count, the eager one by hashing them privately and freeing them.
func (w *settledWorld) slide(s *settledSeq, k int) {
	w.lazy.FreeCounted(k, k)
	for j := range k {
		w.eager.CommitPrivate(s.eagerWin, j, w.fresh(1)[0])
	}
	w.eager.Free(s.eagerWin[:k])
	s.eagerWin = slices.Delete(s.eagerWin, 0, k)
	s.win -= k
}

// windowContent is how many of s's window blocks hold content.
func (s *settledSeq) windowContent() int {
	if s.winPartial && s.win > 0 {
		return s.win - 1
	}
	return s.win
}

// stop ends running sequence i: preempted (the lazy pool hashes its private
// blocks first, as the engine's settlePrivate does, then both Free) or
// finished (lazy FreeSettled, eager Free). Its window blocks go first.
func (w *settledWorld) stop(i int, preempted bool) {
	s := w.seqs[i]
	w.seqs = slices.Delete(w.seqs, i, i+1)
	content := s.windowContent()
	w.lazy.FreeCounted(s.win, content)
	for j := range content {
		w.eager.CommitPrivate(s.eagerWin, j, w.fresh(1)[0])
	}
	w.eager.Free(s.eagerWin)
	s.win, s.eagerWin = 0, nil
	w.claim(s)
	if preempted {
		for j := s.settledUntil; j < len(s.hashes); j++ {
			w.lazy.CommitPrivate(s.lazy, j, s.hashes[j])
		}
		s.settledUntil = len(s.hashes)
		w.lazy.Free(s.lazy)
		w.eager.Free(s.eager)
		w.gone = append(w.gone, s)
		return
	}
	w.lazy.FreeSettled(s.lazy, s.shared, len(s.hashes))
	w.eager.Free(s.eager)
}

// resume restarts a preempted sequence as the engine does: its shared
// prompt through the index (Match), and, if all of that hits, its private
// blocks from the ones it held that kept their hashes (Held).
func (w *settledWorld) resume() {
	i := w.r.IntN(len(w.gone))
	s := w.gone[i]
	w.gone = slices.Delete(w.gone, i, i+1)
	hit := w.lazy.Match(s.hashes[:s.shared])
	if e := w.eager.Match(s.hashes[:s.shared]); e != hit {
		w.fail("Match: lazy %d, eager %d", hit, e)
		return
	}
	held := hit
	if hit == s.shared {
		lh := w.lazy.Held(s.lazy[hit:], s.hashes[hit:])
		if eh := w.eager.Held(s.eager[hit:], s.hashes[hit:]); lh != eh {
			w.fail("Held: lazy %d, eager %d", lh, eh)
			return
		}
		held += lh
	}
	la := w.lazy.FreeAmong(s.hashes[:hit]) + w.lazy.FreeAmongBlocks(s.lazy[hit:held])
	ea := w.eager.FreeAmong(s.hashes[:hit]) + w.eager.FreeAmongBlocks(s.eager[hit:held])
	if la != ea {
		w.fail("blocks to take from the free queue: lazy %d, eager %d", la, ea)
	}
	need := len(s.lazy) - held
	if need > w.lazy.FreeBlocks()-la {
		return
	}
	n := &settledSeq{hashes: s.hashes, shared: s.shared, partial: s.partial, settledUntil: held}
	n.lazy = w.lazy.AcquireBlocks(w.lazy.Acquire(nil, s.hashes[:hit]), s.lazy[hit:held])
	n.eager = w.eager.AcquireBlocks(w.eager.Acquire(nil, s.hashes[:hit]), s.eager[hit:held])
	w.allocate(n, need)
	w.commit(n, held)
	w.seqs = append(w.seqs, n)
}

// shape renders a pool's free queue, head to tail, as what it observably
// holds: a shared hash, "p" for private content (hashed privately or
// anonymous), "-" for nothing.
func shape(p *Pool) []string {
	var out []string
	for i, s := 0, p.qHead; i <= p.qLen; i, s = i+1, p.next(s) {
		if i == p.hLen {
			for range p.fresh {
				out = append(out, "-")
			}
		}
		if i == p.qLen {
			break
		}
		switch b := p.queue[s]; {
		case b < 0: // a run of placeholders
			for range -b {
				out = append(out, "p")
			}
		case p.blocks[b].pos != uint32(s):
		case p.blocks[b].private:
			out = append(out, "p")
		case p.blocks[b].hash == noneHash:
			out = append(out, "-")
		default:
			out = append(out, fmt.Sprintf("%x", p.blocks[b].hash))
		}
	}
	return out
}

func (w *settledWorld) compare() {
	l, e := w.lazy, w.eager
	w.owned = max(w.owned, l.owned)
	if l.FreeBlocks() != e.FreeBlocks() || l.CachedBlocks() != e.CachedBlocks() || l.Stats() != e.Stats() {
		w.fail("free %d/%d, cached %d/%d, stats %+v/%+v (lazy/eager)",
			l.FreeBlocks(), e.FreeBlocks(), l.CachedBlocks(), e.CachedBlocks(), l.Stats(), e.Stats())
	}
	if ls, es := shape(l), shape(e); !slices.Equal(ls, es) {
		w.fail("free queue: lazy %v, eager %v", ls, es)
	}
	for _, p := range []*Pool{l, e} {
		if err := p.Check(); err != nil {
			w.fail("%v", err)
		}
	}
}

func (w *settledWorld) op() {
	switch k := w.r.IntN(10); {
	case k < 3 || len(w.seqs) == 0 && len(w.gone) == 0:
		w.admit()
	case k < 6 && len(w.seqs) > 0:
		w.grow()
	case k < 8 && len(w.seqs) > 0:
		w.stop(w.r.IntN(len(w.seqs)), w.r.IntN(3) == 0)
	case k == 8 && len(w.seqs) > 0:
		w.sliding(w.seqs[w.r.IntN(len(w.seqs))])
	case len(w.gone) > 0:
		w.resume()
	}
}

// sliding grows or slides a sequence's window blocks.
func (w *settledWorld) sliding(s *settledSeq) {
	if c := s.windowContent(); c > 0 && w.r.IntN(2) == 0 {
		w.slide(s, 1+w.r.IntN(c))
		return
	}
	w.window(s, w.r.IntN(3))
}

// TestFreeSettledMatchesEagerCommit holds lazy hashing to its promise (see
// private.go, freelist.go): a pool that leaves private blocks unhashed,
// frees finished sequences with FreeSettled (their blocks become
// anonymous, handed out again as anonymous entries or counts), and keeps
// a sliding window's blocks as counts it frees with FreeCounted, behaves
// observably exactly like one that commits every full block: the same
// Match, Held and allocation outcomes, counters, and free queue as seen
// through what its entries hold, after every operation.
func TestFreeSettledMatchesEagerCommit(t *testing.T) {
	seeds, steps := uint64(1000), 400
	if testing.Short() || raceEnabled {
		seeds = 150
	}
	owned := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 4 + r.IntN(60)
		w := &settledWorld{r: r, lazy: NewPool(n, 1, true), eager: NewPool(n, 1, true)}
		for i := range w.prompts {
			w.prompts[i] = w.fresh(1 + r.IntN(5))
		}
		for step := range steps {
			w.op()
			w.compare()
			if w.err != nil {
				t.Fatalf("seed %d step %d (pool of %d): %v", seed, step, n, w.err)
			}
		}
		owned = max(owned, w.owned)
	}
	if owned == 0 {
		t.Fatal("no table ever held an anonymous block: the test exercises nothing")
	}
}
