package kv

import (
	"math"
	"slices"
)

// The free queue is a ring of block IDs with lazy deletion.
//
// p.queue is a circular buffer; its qLen entries start at slot qHead and run
// from the head of the queue (evicted first) to the tail. An entry is live
// iff its block records the entry's slot in pos: a free block has exactly
// one live entry, a used block has pos == notQueued and none. Taking a free
// block out of the middle of the queue (Acquire of a cached block) just sets
// its pos to notQueued; its entry goes stale and stays where it is until
// Allocate skips it (dropStale) or compact drops it. The live entries, in
// ring order, are the LRU queue a doubly-linked list would hold, in the same
// order.
//
// A linked list made Allocate chase next pointers, one dependent cache miss
// per block in pools far beyond the CPU caches; Allocate reads IDs from
// consecutive slots, so the per-block fetches are independent and overlap
// (BenchmarkPoolsRoundRobin).
//
// Anonymous blocks (FreeSettled) hold content nobody can ask for again, so
// which of them Allocate hands out is unobservable: only where they stand
// in the queue matters, since each one evicted counts and the cached blocks
// behind them survive until they are gone. So an anonymous block has no
// identity at all: the free queue holds placeholders for the free ones,
// always live, a run of them in a row as one entry (−k for k of them, so
// that freeing or taking a sequence's blocks writes one entry, not one
// each); a table holds anonymousEntry for each it owns
// (p.owned counts them); a caller may hold some as a mere count (p.counted,
// see AllocateAnonymous: a sequence growing block by block while nothing
// else about it changes, as the engine's cruising does, or blocks nobody
// ever looks up, as a hybrid model's sliding-window groups, which give
// them back with FreeCounted); and the IDs of all
// of them wait in p.anon, their state as it was when they became
// anonymous. Taking, freeing and counting them touches no block state and
// moves no ID. Nor need an anonymous block have an ID at all: p.unnamed
// counts those without, taken fresh as counts (takeFreshAnonymous) or
// whose IDs fresh blocks took (takeFresh reuses them before new ones, so
// that the pool's block state stays as large as the blocks in use and
// cached, not all it ever touched: in a long run every block of the pool
// passes through the queue). Only when one stops being anonymous — a table commits a
// hash to it, or frees it as unsettled content, which goes to the head of
// the queue like any uncached block — does it take an ID from p.anon and
// get its state written. A sequence whose blocks are all private so costs
// the pool no access to block state at all, which in a many-instance run
// was a cache miss per block allocated and another per block freed.
//
// Fresh blocks: a new pool's blocks are all free, uncached and queued in ID
// order, and each is taken from the head in that order before anything
// freed to the tail. So they are no entries at all: p.fresh counts them,
// they stand in the queue after the ring's first p.hLen entries (blocks
// freed to the head since the pool was made), and taking one gives it the
// next ID, len(p.blocks), and appends its state. A pool costs O(1) to make
// and memory for the blocks it has used, not for all it could use: a
// thousand-instance run no longer pays for blocks no sequence reaches.
// Which block Allocate hands out, and when, is exactly what queuing every
// ID at the start would give.
//
// Bound: stale entries appear only when a free block is taken out of the
// queue, and compact runs as soon as they outnumber the live ones, so there
// are never more than NumBlocks of them, nor more than NumBlocks live ones:
// 2·NumBlocks slots always suffice. The ring starts with ringSlotsMin slots
// and grows (room) when an entry finds it full.

const (
	// notQueued is a used block's pos: no slot (slots are < 2·MaxInt32).
	notQueued = math.MaxUint32
	// anonymousPos is an anonymous block's pos: its ID waits in p.anon.
	anonymousPos = math.MaxUint32 - 1
	// anonEntry is the ring entry standing for one free anonymous block;
	// an entry −k stands for k of them in a row.
	anonEntry BlockID = -1
	// ringSlotsMin is the ring's size in a new pool (at most 2·NumBlocks).
	ringSlotsMin = 64
)

// freshAtHead returns how many fresh blocks, up to most, open the queue.
func (p *Pool) freshAtHead(most int) int {
	if p.hLen > 0 {
		return 0
	}
	return min(most, p.fresh)
}

// takeFresh takes the k fresh blocks opening the queue into table, with
// refcount 1. Their IDs are those of anonymous blocks while there are any
// (which then go without, see unnamed), else new ones.
func (p *Pool) takeFresh(table []BlockID, k int) []BlockID {
	reused := min(k, len(p.anon))
	for _, b := range p.anon[len(p.anon)-reused:] {
		table = append(table, b)
		p.blocks[b] = block{pos: notQueued, refs: 1}
	}
	p.anon = p.anon[:len(p.anon)-reused]
	p.unnamed += reused
	p.growBlocks(k - reused)
	for range k - reused {
		table = append(table, BlockID(len(p.blocks)))
		p.blocks = append(p.blocks, block{pos: notQueued, refs: 1})
	}
	p.tookFresh(k)
	return table
}

// takeFreshAnonymous takes the k fresh blocks opening the queue as
// anonymous blocks held as a count (AllocateAnonymous), without IDs.
func (p *Pool) takeFreshAnonymous(k int) {
	p.unnamed += k
	p.tookFresh(k)
	p.counted += k
}

// growBlocks makes room for k more blocks' state (see nextCap).
func (p *Pool) growBlocks(k int) {
	if n := len(p.blocks) + k; n > cap(p.blocks) {
		p.blocks = slices.Grow(p.blocks, nextCap(cap(p.blocks), n, p.numBlocks)-len(p.blocks))
	}
}

// nextCap is the capacity a growing slice of at most limit entries takes to
// hold n: four times the old one, or all of limit once that passes half of
// it, so that a pool whose blocks all end up used has allocated about 1.2–1.5
// times their state, and one that uses few has allocated little.
func nextCap(old, n, limit int) int {
	c := max(n, 4*old, ringSlotsMin)
	if 2*c > limit {
		return limit
	}
	return c
}

// tookFresh counts k fresh blocks out of the queue.
func (p *Pool) tookFresh(k int) {
	p.fresh -= k
	p.numFree -= k
}

// tookHead counts k entries taken from the ring's head: while fresh blocks
// remain, they came from ahead of them.
func (p *Pool) tookHead(k int) {
	if p.fresh > 0 {
		p.hLen -= k
	}
}

// room makes the ring hold at least n entries: it compacts it and, if that
// is not enough, moves it into a larger one (nextCap, up to 2·NumBlocks).
func (p *Pool) room(n int) {
	if n <= len(p.queue) {
		return
	}
	p.compact()
	if n <= len(p.queue) {
		return
	}
	ring := make([]BlockID, nextCap(len(p.queue), n, 2*p.numBlocks))
	for j, s := 0, p.qHead; j < p.qLen; j, s = j+1, p.next(s) {
		b := p.queue[s]
		ring[j] = b
		if b >= 0 {
			p.blocks[b].pos = uint32(j)
		}
	}
	p.queue, p.qHead = ring, 0
}

// next returns the slot after s.
func (p *Pool) next(s int) int {
	if s++; s == len(p.queue) {
		return 0
	}
	return s
}

// pushTail appends free block b to the tail of the queue.
func (p *Pool) pushTail(b BlockID) {
	p.room(p.qLen + 1)
	s := p.qHead + p.qLen
	if s >= len(p.queue) {
		s -= len(p.queue)
	}
	p.enqueue(b, s)
}

// pushAnon makes free block b, which holds no hash, anonymous and appends
// a placeholder for it to the tail of the queue.
func (p *Pool) pushAnon(b BlockID) {
	p.blocks[b].pos = anonymousPos
	p.anon = append(p.anon, b)
	p.addPlaceholders(1)
}

// popAnonymous takes the ID of an anonymous block, which the caller makes
// an ordinary block: any will do, and one without an ID gets a new one.
func (p *Pool) popAnonymous() BlockID {
	if len(p.anon) == 0 {
		p.unnamed--
		p.growBlocks(1)
		p.blocks = append(p.blocks, block{pos: anonymousPos})
		return BlockID(len(p.blocks) - 1)
	}
	b := p.anon[len(p.anon)-1]
	p.anon = p.anon[:len(p.anon)-1]
	return b
}

// addPlaceholders appends k placeholders to the tail of the queue: to
// the run that ends it, if one does. (Runs are never among the entries
// ahead of fresh blocks: those were all freed to the head.)
func (p *Pool) addPlaceholders(k int) {
	if k == 0 {
		return
	}
	p.numFree += k
	if p.qLen > 0 {
		if t := p.slot(p.qLen - 1); p.queue[t] < 0 {
			p.queue[t] -= BlockID(k)
			return
		}
	}
	p.room(p.qLen + 1)
	p.queue[p.slot(p.qLen)] = BlockID(-k)
	p.qLen++
	p.runs++
}

// slot is the ring slot of the queue's j-th entry.
func (p *Pool) slot(j int) int {
	if s := p.qHead + j; s < len(p.queue) {
		return s
	}
	return p.qHead + j - len(p.queue)
}

// placeholdersAtHead counts the placeholders opening the queue, up to most
// and up to the end of the run that opens it.
func (p *Pool) placeholdersAtHead(most int) int {
	if p.qLen == 0 || p.fresh > 0 && p.hLen == 0 {
		return 0 // empty, or fresh blocks first
	}
	if v := p.queue[p.qHead]; v < 0 {
		return min(most, int(-v))
	}
	return 0
}

// freePlaceholders is how many free anonymous blocks the queue's
// placeholders stand for.
func (p *Pool) freePlaceholders() int { return len(p.anon) + p.unnamed - p.owned - p.counted }

// takeAnonymous pops the k placeholders opening the queue and appends k
// anonymous entries to table: their content is evicted.
func (p *Pool) takeAnonymous(table []BlockID, k int) []BlockID {
	p.takePlaceholders(k)
	p.owned += k
	return appendAnonymous(table, k)
}

// appendAnonymous appends k anonymous entries to table.
func appendAnonymous(table []BlockID, k int) []BlockID {
	n := len(table)
	table = slices.Grow(table, k)[:n+k]
	fill(table[n:], anonymousEntry)
	return table
}

// takePlaceholders pops the k placeholders opening the queue, at most the
// run that opens it: the content of the blocks they stand for is evicted.
func (p *Pool) takePlaceholders(k int) {
	if v := p.queue[p.qHead]; int(-v) > k {
		p.queue[p.qHead] = v + BlockID(k)
	} else {
		p.qHead = p.next(p.qHead)
		p.qLen--
		p.runs--
		p.tookHead(1)
	}
	p.numFree -= k
	p.stats.Evicted += int64(k)
}

// returnAnonymous frees the anonymous entries table[j..last], for the
// smallest j ≥ from such that all are anonymous, as free does walking back
// from last: a placeholder each at the tail. It returns j.
func (p *Pool) returnAnonymous(table []BlockID, from, last int) int {
	j := last
	for j > from && table[j-1].anonymous() {
		j--
	}
	p.addPlaceholders(last - j + 1)
	p.owned -= last - j + 1
	return j
}

func fill(s []BlockID, v BlockID) {
	for i := range s {
		s[i] = v
	}
}

// pushHead inserts free block b at the head of the queue.
func (p *Pool) pushHead(b BlockID) {
	p.room(p.qLen + 1)
	if p.fresh > 0 {
		p.hLen++
	}
	if p.qHead--; p.qHead < 0 {
		p.qHead += len(p.queue)
	}
	p.enqueue(b, p.qHead)
}

// enqueue writes b's live entry into slot s, which the caller has added to
// the ring's ends.
func (p *Pool) enqueue(b BlockID, s int) {
	p.queue[s] = b
	p.blocks[b].pos = uint32(s)
	p.qLen++
	p.numFree++
}

// dropStale drops the stale entries opening the queue, so that it opens
// with a live entry or fresh blocks (or is empty). Amortised O(1).
func (p *Pool) dropStale() {
	for p.qLen > 0 && (p.fresh == 0 || p.hLen > 0) {
		b := p.queue[p.qHead]
		if b < 0 || p.blocks[b].pos == uint32(p.qHead) {
			return
		}
		p.qHead = p.next(p.qHead)
		p.qLen--
		p.tookHead(1)
	}
}

// popHead removes the queue's head block and returns it; the queue must
// open with a live entry that is not a placeholder (see dropStale and
// placeholdersAtHead).
func (p *Pool) popHead() BlockID {
	b := p.queue[p.qHead]
	p.qHead = p.next(p.qHead)
	p.qLen--
	p.tookHead(1)
	p.blocks[b].pos = notQueued
	p.numFree--
	return b
}

// remove takes free block b out of the queue, leaving its entry stale.
// Amortised O(1).
func (p *Pool) remove(b BlockID) {
	p.blocks[b].pos = notQueued
	p.numFree--
	if live := p.numFree - p.fresh - p.freePlaceholders() + p.runs; p.qLen-live > live {
		p.compact()
	}
}

// compact drops the stale entries, moving the live ones towards the head in
// order and updating their blocks' pos. Cost O(qLen), paid for by the more
// than qLen/2 removals that made the entries stale since the last compact.
func (p *Pool) compact() {
	w, r, kept, hLen := p.qHead, p.qHead, 0, p.hLen
	runs, lastRun := 0, -1 // the slot of the last entry kept, if a run
	for j := range p.qLen {
		if j == p.hLen {
			hLen, lastRun = kept, -1 // the fresh blocks stand behind the entries kept so far
		}
		switch b := p.queue[r]; {
		case b < 0 && lastRun >= 0: // a run after a run: one run
			p.queue[lastRun] += b
		case b < 0:
			p.queue[w], lastRun = b, w
			w, kept, runs = p.next(w), kept+1, runs+1
		case p.blocks[b].pos == uint32(r):
			p.queue[w], lastRun = b, -1
			p.blocks[b].pos = uint32(w)
			w, kept = p.next(w), kept+1
		}
		r = p.next(r)
	}
	if p.hLen >= p.qLen {
		hLen = kept
	}
	p.qLen, p.hLen, p.runs = kept, hLen, runs
}
