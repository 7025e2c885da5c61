package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// propSeq is a sequence in the property test.
type propSeq struct {
	segs   []Segment
	uid    uint64
	tokens int
	hashes []uint64
	table  []BlockID
}

// propWorld drives a Pool the way an engine does and audits it.
type propWorld struct {
	r      *rand.Rand
	p      *Pool
	seqs   []*propSeq
	nextID uint64
}

// admit starts a sequence with a prompt drawn from a few shared prefixes,
// reusing its cached prefix; it gives up if blocks are short.
func (w *propWorld) admit() {
	bs := w.p.BlockSize()
	w.nextID++
	s := &propSeq{uid: w.nextID, tokens: 1 + w.r.IntN(6*bs)}
	s.segs = []Segment{{ID: uint64(w.r.IntN(3)), Tokens: 2 * bs}, {ID: 10 + uint64(w.r.IntN(2)), Tokens: bs + 1}}
	s.hashes = AppendBlockHashes(nil, s.segs, s.uid, s.tokens, bs)
	hit := w.p.Match(s.hashes)
	need := (s.tokens+bs-1)/bs - hit
	if need > w.p.FreeBlocks()-w.p.FreeAmong(s.hashes[:hit]) {
		return
	}
	s.table = w.p.Acquire(nil, s.hashes[:hit])
	var ok bool
	if s.table, ok = w.p.Allocate(s.table, need); !ok {
		panic("allocation failed after capacity check")
	}
	for i := hit; i < len(s.hashes); i++ {
		w.p.Commit(s.table, i, s.hashes[i])
	}
	w.seqs = append(w.seqs, s)
}

// grow decodes one token on sequence i, preempting it if no block is free.
func (w *propWorld) grow(i int) {
	s, bs := w.seqs[i], w.p.BlockSize()
	if s.tokens%bs == 0 {
		var ok bool
		if s.table, ok = w.p.Allocate(s.table, 1); !ok {
			w.finish(i)
			return
		}
	}
	s.tokens++
	n := len(s.hashes)
	s.hashes = AppendBlockHashes(s.hashes, s.segs, s.uid, s.tokens, bs)
	if len(s.hashes) > n {
		w.p.Commit(s.table, n, s.hashes[n])
	}
}

func (w *propWorld) finish(i int) {
	w.p.Free(w.seqs[i].table)
	w.seqs[i] = w.seqs[len(w.seqs)-1]
	w.seqs = w.seqs[:len(w.seqs)-1]
}

// audit checks Check plus what only the driver knows: refcounts equal table
// membership, and a hashed block sits where its hash says it belongs.
func (w *propWorld) audit() error {
	if err := w.p.Check(); err != nil {
		return err
	}
	refs := make([]int, w.p.NumBlocks())
	distinct := 0
	for _, s := range w.seqs {
		if len(s.table) != (s.tokens+w.p.BlockSize()-1)/w.p.BlockSize() {
			return fmt.Errorf("sequence %d: %d blocks for %d tokens", s.uid, len(s.table), s.tokens)
		}
		for i, b := range s.table {
			if refs[b] == 0 {
				distinct++
			}
			refs[b]++
			if h := w.p.BlockHash(b); h != 0 && (i >= len(s.hashes) || h != s.hashes[i]) {
				return fmt.Errorf("sequence %d block %d (id %d) holds a foreign hash", s.uid, i, b)
			}
		}
	}
	for b, r := range refs {
		if w.p.RefCount(BlockID(b)) != r {
			return fmt.Errorf("block %d: refcount %d, held by %d tables", b, w.p.RefCount(BlockID(b)), r)
		}
	}
	if distinct != w.p.UsedBlocks() {
		return fmt.Errorf("%d blocks in tables, UsedBlocks %d", distinct, w.p.UsedBlocks())
	}
	return nil
}

// TestPoolRandomOps is a swarm test: random admissions, decode steps and
// completions on small pools, with every invariant audited after every step.
func TestPoolRandomOps(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 99))
		w := &propWorld{r: r, p: NewPool(8+r.IntN(40), 1+r.IntN(5), seed%4 != 0)}
		for step := range 1500 {
			switch k := r.IntN(10); {
			case k < 3 || len(w.seqs) == 0:
				w.admit()
			case k < 8:
				w.grow(r.IntN(len(w.seqs)))
			default:
				w.finish(r.IntN(len(w.seqs)))
			}
			if err := w.audit(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
		}
		if st := w.p.Stats(); w.p.PrefixCaching() && st.HitBlocks == 0 {
			t.Errorf("seed %d: no prefix hits in %+v", seed, st)
		}
	}
}

func TestPoolPanics(t *testing.T) {
	used := func() (*Pool, []BlockID) {
		p := NewPool(4, 2, true)
		tab, _ := p.Allocate(nil, 2)
		return p, tab
	}
	for name, f := range map[string]func(){
		"zero blocks":       func() { NewPool(0, 16, true) },
		"zero block size":   func() { NewPool(4, 0, true) },
		"negative allocate": func() { p, _ := used(); p.Allocate(nil, -1) },
		"double free":       func() { p, tab := used(); p.Free(tab); p.Free(tab) },
		"commit to free":    func() { p, tab := used(); p.Free(tab); p.Commit(tab, 0, 5) },
		"commit hash 0":     func() { p, tab := used(); p.Commit(tab, 0, 0) },
		"recommit":          func() { p, tab := used(); p.Commit(tab, 0, 5); p.Commit(tab, 0, 6) },
		"acquire uncached":  func() { p, _ := used(); p.Acquire(nil, []uint64{7}) },
	} {
		t.Run(name, func(t *testing.T) { mustPanic(t, f) })
	}
}

func TestCheckDetectsCorruption(t *testing.T) {
	for name, corrupt := range map[string]func(p *Pool){
		"refcount":       func(p *Pool) { p.blocks[3].refs = 1 },
		"negative ref":   func(p *Pool) { p.blocks[0].refs = -1 },
		"wild slot":      func(p *Pool) { p.blocks[2].pos = 99 },
		"slot off span":  func(p *Pool) { p.blocks[2].pos = 1 },
		"slot mismatch":  func(p *Pool) { p.queue[p.blocks[3].pos] = 2 },
		"wild entry":     func(p *Pool) { p.queue[p.blocks[3].pos] = 99 },
		"used queued":    func(p *Pool) { p.blocks[0].pos = 0 },
		"free unqueued":  func(p *Pool) { p.blocks[4].pos = notQueued },
		"free count":     func(p *Pool) { p.numFree-- },
		"ring length":    func(p *Pool) { p.qLen = 100 },
		"ring head":      func(p *Pool) { p.qHead = -1 },
		"too stale":      func(p *Pool) { p.qLen = 2 * p.NumBlocks() },
		"stray hash":     func(p *Pool) { p.blocks[1].hash = 42 },
		"stray entry":    func(p *Pool) { p.cached.put(42, 1) },
		"private, none":  func(p *Pool) { p.blocks[1].private = true },
		"private, index": func(p *Pool) { p.blocks[0].private = true },
		"fresh count":    func(p *Pool) { p.fresh++ },
		"ahead of fresh": func(p *Pool) { p.hLen = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			p := NewPool(6, 4, true)
			tab, _ := p.Allocate(nil, 2)
			rest, _ := p.Allocate(nil, 4) // every block's state exists, the four free in the ring
			p.Free(rest)
			p.Commit(tab, 0, 9)
			if err := p.Check(); err != nil {
				t.Fatalf("healthy pool: %v", err)
			}
			corrupt(p)
			if p.Check() == nil {
				t.Error("corruption not detected")
			}
		})
	}
}

func TestPoolSteadyStateNoAlloc(t *testing.T) {
	p := NewPool(256, 16, true)
	tab := make([]BlockID, 0, 32)
	h := uint64(0)
	allocs := testing.AllocsPerRun(2000, func() {
		tab, _ = p.Allocate(tab[:0], 32)
		for i := range tab {
			h++
			p.Commit(tab, i, mix64(h)|1)
		}
		p.Match([]uint64{mix64(h) | 1})
		p.Free(tab)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per cycle, want 0", allocs)
	}
}

// BenchmarkAllocateFree measures one sequence's life on a busy pool: allocate
// 32 blocks (evicting cached ones), commit a fresh hash on each, free them.
func BenchmarkAllocateFree(b *testing.B) {
	p := NewPool(4096, 16, true)
	tab := make([]BlockID, 0, 32)
	h := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		tab, _ = p.Allocate(tab[:0], 32)
		for i := range tab {
			h++
			p.Commit(tab, i, mix64(h)|1)
		}
		p.Free(tab)
	}
}

// BenchmarkMatch measures a 64-block prefix look-up that hits every block.
func BenchmarkMatch(b *testing.B) {
	p := NewPool(4096, 16, true)
	hs := AppendBlockHashes(nil, []Segment{{ID: 1, Tokens: 1000}}, 2, 64*16, 16)
	tab, _ := p.Allocate(nil, len(hs))
	for i := range tab {
		p.Commit(tab, i, hs[i])
	}
	b.ReportAllocs()
	for b.Loop() {
		if p.Match(hs) != len(hs) {
			b.Fatal("miss")
		}
	}
}

// BenchmarkAppendBlockHashes measures hashing a 4096-token prompt of three
// segments (256 blocks of 16 tokens).
func BenchmarkAppendBlockHashes(b *testing.B) {
	segs := []Segment{{ID: 1, Tokens: 1000}, {ID: 2, Tokens: 2000}, {ID: 3, Tokens: 500}}
	dst := make([]uint64, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendBlockHashes(dst[:0], segs, 4, 4096, 16)
	}
}

// BenchmarkPoolSimLike mimics the simulator's use of one instance's pool:
// 30,000 blocks of 16 tokens; each iteration admits one sequence of 60–100
// blocks whose first 16 come from one of 8 shared system prompts (Match,
// Acquire, Allocate the rest, Commit block by block) and frees the oldest of
// 200 live sequences, so later allocations evict what earlier ones cached.
func BenchmarkPoolSimLike(b *testing.B) {
	const live, prefixBlocks = 200, 16
	p := NewPool(30000, 16, true)
	var prompts [8][]uint64
	for i := range prompts {
		prompts[i] = AppendBlockHashes(nil, []Segment{{ID: uint64(i), Tokens: prefixBlocks * 16}}, 0, prefixBlocks*16, 16)
	}
	r := rand.New(rand.NewPCG(1, 2))
	tables := make([][]BlockID, live)
	for i := range tables {
		tables[i] = make([]BlockID, 0, 100)
	}
	hs := make([]uint64, 0, 100)
	ctr := uint64(0)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		p.Free(tables[i])
		hs = append(hs[:0], prompts[r.IntN(len(prompts))]...)
		for range 44 + r.IntN(41) {
			ctr++
			hs = append(hs, mix64(ctr)|1)
		}
		hit := p.Match(hs)
		tab := p.Acquire(tables[i][:0], hs[:hit])
		tab, _ = p.Allocate(tab, len(hs)-hit)
		for j := hit; j < len(hs); j++ {
			p.Commit(tab, j, hs[j])
		}
		tables[i] = tab
		i = (i + 1) % live
	}
}
