package kv

import (
	"math/rand/v2"
	"testing"
)

// benchInstance is one engine instance in BenchmarkPoolsRoundRobin: a pool
// and the block tables of its live sequences, replaced oldest first.
type benchInstance struct {
	p      *Pool
	tables [][]BlockID
	oldest int
}

// benchDriver drives many pools the way the simulator does, with hashes
// drawn from one shared counter.
type benchDriver struct {
	r       *rand.Rand
	prompts [8][]uint64 // shared system prompts, 16 blocks each
	hs      []uint64
	ctr     uint64
}

// step frees inst's oldest sequence and admits a new one in its place (a
// shared 16-block prompt, Commit on a miss, then 44–84 blocks committed
// privately), then decodes one new private block on each of 8 random live
// sequences, so allocations interleave across tables as in a real batch.
func (d *benchDriver) step(inst *benchInstance) {
	p := inst.p
	p.Free(inst.tables[inst.oldest])
	d.hs = append(d.hs[:0], d.prompts[d.r.IntN(len(d.prompts))]...)
	shared := len(d.hs)
	for range 44 + d.r.IntN(41) {
		d.ctr++
		d.hs = append(d.hs, mix64(d.ctr)|1)
	}
	hit := p.Match(d.hs)
	tab := p.Acquire(inst.tables[inst.oldest][:0], d.hs[:hit])
	tab, _ = p.Allocate(tab, len(d.hs)-hit)
	for j := hit; j < len(d.hs); j++ {
		if j < shared {
			p.Commit(tab, j, d.hs[j])
		} else {
			p.CommitPrivate(tab, j, d.hs[j])
		}
	}
	inst.tables[inst.oldest] = tab
	inst.oldest = (inst.oldest + 1) % len(inst.tables)
	for range 8 {
		i := d.r.IntN(len(inst.tables))
		t, ok := p.Allocate(inst.tables[i], 1)
		if !ok {
			panic("bench: pool exhausted")
		}
		d.ctr++
		p.CommitPrivate(t, len(t)-1, mix64(d.ctr)|1)
		inst.tables[i] = t
	}
}

// BenchmarkPoolsRoundRobin is BenchmarkPoolSimLike at cluster scale: 64
// pools of 30,000 blocks (about 100 MB of block state and indexes, far beyond
// the CPU caches), stepped round-robin as the simulator interleaves
// instances, with shared prefixes committed and unique blocks committed
// privately. Each iteration is one step on one pool (about 100 block
// allocations and frees); the pools are warmed past their first evictions
// before timing starts.
func BenchmarkPoolsRoundRobin(b *testing.B) {
	const pools, blocks, live = 64, 30000, 200
	d := &benchDriver{r: rand.New(rand.NewPCG(3, 4)), hs: make([]uint64, 0, 128)}
	for i := range d.prompts {
		d.prompts[i] = AppendBlockHashes(nil, []Segment{{ID: uint64(i), Tokens: 16 * 16}}, 0, 16*16, 16)
	}
	insts := make([]benchInstance, pools)
	for i := range insts {
		insts[i] = benchInstance{p: NewPool(blocks, 16, true), tables: make([][]BlockID, live)}
		for j := range insts[i].tables {
			insts[i].tables[j] = make([]BlockID, 0, 160)
		}
	}
	for i := range 3 * live * pools {
		d.step(&insts[i%pools])
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.step(&insts[i%pools])
		i++
	}
}
