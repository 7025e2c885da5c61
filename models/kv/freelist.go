package kv

import "math"

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
// behind them survive until they are gone. Their ring entries are therefore
// anonEntry placeholders, always live, and the blocks themselves wait on a
// stack (p.anon); Allocate reaching placeholders takes the most recently
// settled blocks. Reusing the blocks a finishing sequence just released keeps
// a busy pool's working set to the blocks in use rather than cycling
// through all of them, which in a many-instance run meant a cache miss for
// nearly every block allocated.
//
// A block a table takes from the stack stays anonymous: its state is left
// as it was on the stack, the table holds it as own(b), a negative entry,
// and p.owned counts it. Nothing about it needs reading or writing until
// the table frees it — back onto the stack, or, if it is not settled
// content, to the head of the queue like any uncached block — or commits a
// hash to it, when it becomes an ordinary block in use. A sequence whose
// blocks are all private so costs the pool no access to their state at
// all, which in a many-instance run was a cache miss per block allocated
// and another per block freed.
//
// A caller may also hold anonymous blocks as a mere count: a sequence
// growing block by block while nothing else about it changes (see the
// engine's cruising) takes them with AllocateAnonymous, which leaves the
// queue exactly as Allocate would, and the pool keeps their IDs in
// p.counted until Claim appends them to the table as anonymous entries.
// The sequence is not touched until then.
//
// Bound: stale entries appear only when a free block is taken out of the
// queue, and compact runs as soon as they outnumber the live ones, so there
// are never more than NumBlocks of them, nor more than NumBlocks live ones:
// 2·NumBlocks slots always suffice, and the ring never grows.

const (
	// notQueued is a used block's pos: no slot (slots are < 2·MaxInt32).
	notQueued = math.MaxUint32
	// onAnonStack is a free anonymous block's pos: it waits on p.anon and
	// an anonEntry in the ring stands for it.
	onAnonStack = math.MaxUint32 - 1
	// anonEntry is the ring entry standing for one anonymous block.
	anonEntry BlockID = -1
)

// next returns the slot after s.
func (p *Pool) next(s int) int {
	if s++; s == len(p.queue) {
		return 0
	}
	return s
}

// pushTail appends free block b to the tail of the queue.
func (p *Pool) pushTail(b BlockID) {
	s := p.qHead + p.qLen
	if s >= len(p.queue) {
		s -= len(p.queue)
	}
	p.enqueue(b, s)
}

// pushAnon makes free block b, which holds no hash, anonymous and appends
// it to the tail of the queue.
func (p *Pool) pushAnon(b BlockID) {
	p.blocks[b].pos = onAnonStack
	p.pushPlaceholder(b)
}

// pushPlaceholder appends anonymous block b to the tail of the queue: a
// placeholder entry there, the block on the stack.
func (p *Pool) pushPlaceholder(b BlockID) {
	s := p.qHead + p.qLen
	if s >= len(p.queue) {
		s -= len(p.queue)
	}
	p.queue[s] = anonEntry
	p.anon = append(p.anon, b)
	p.qLen++
	p.numFree++
}

// placeholdersAtHead counts the placeholders opening the queue, up to most
// and up to the end of the ring's storage.
func (p *Pool) placeholdersAtHead(most int) int {
	most = min(most, p.qLen, len(p.queue)-p.qHead)
	run := p.queue[p.qHead : p.qHead+most]
	for k, b := range run {
		if b != anonEntry {
			return k
		}
	}
	return most
}

// takeAnonymous pops the k placeholders opening the queue and appends to
// table the k anonymous blocks they stand for, most recently settled
// first, as anonymous entries: their content is evicted, their state left
// as it is.
func (p *Pool) takeAnonymous(table []BlockID, k int) []BlockID {
	top := len(p.anon) - k
	for i := len(p.anon) - 1; i >= top; i-- {
		table = append(table, own(p.anon[i]))
	}
	p.takePlaceholders(k)
	p.owned += k
	return table
}

// takePlaceholders pops the k placeholders opening the queue and the k
// blocks they stand for off the stack: their content is evicted.
func (p *Pool) takePlaceholders(k int) {
	p.anon = p.anon[:len(p.anon)-k]
	if p.qHead += k; p.qHead == len(p.queue) {
		p.qHead = 0
	}
	p.qLen -= k
	p.numFree -= k
	p.stats.Evicted += int64(k)
}

// returnAnonymous frees the anonymous entries table[j..last], for the
// smallest j ≥ from such that all are anonymous, walking back from last as
// free does: each goes back onto the stack with a placeholder at the tail.
// It returns j.
func (p *Pool) returnAnonymous(table []BlockID, from, last int) int {
	j := last
	for j > from && table[j-1].anonymous() {
		j--
	}
	for i := last; i >= j; i-- {
		p.anon = append(p.anon, own(table[i]))
	}
	k := last - j + 1
	s := p.qHead + p.qLen
	if s >= len(p.queue) {
		s -= len(p.queue)
	}
	first := min(k, len(p.queue)-s) // up to the end of the ring's storage, then from its start
	fill(p.queue[s:s+first], anonEntry)
	fill(p.queue[:k-first], anonEntry)
	p.qLen += k
	p.numFree += k
	p.owned -= k
	return j
}

func fill(s []BlockID, v BlockID) {
	for i := range s {
		s[i] = v
	}
}

// pushHead inserts free block b at the head of the queue.
func (p *Pool) pushHead(b BlockID) {
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
// with a live entry (or is empty). Amortised O(1).
func (p *Pool) dropStale() {
	for p.qLen > 0 {
		b := p.queue[p.qHead]
		if b == anonEntry || p.blocks[b].pos == uint32(p.qHead) {
			return
		}
		p.qHead = p.next(p.qHead)
		p.qLen--
	}
}

// popHead removes the queue's head block and returns it; the queue must
// open with a live entry that is not a placeholder (see dropStale and
// placeholdersAtHead).
func (p *Pool) popHead() BlockID {
	b := p.queue[p.qHead]
	p.qHead = p.next(p.qHead)
	p.qLen--
	p.blocks[b].pos = notQueued
	p.numFree--
	return b
}

// remove takes free block b out of the queue, leaving its entry stale.
// Amortised O(1).
func (p *Pool) remove(b BlockID) {
	p.blocks[b].pos = notQueued
	p.numFree--
	if p.qLen-p.numFree > p.numFree {
		p.compact()
	}
}

// compact drops the stale entries, moving the live ones towards the head in
// order and updating their blocks' pos. Cost O(qLen), paid for by the more
// than qLen/2 removals that made the entries stale since the last compact.
func (p *Pool) compact() {
	w, r := p.qHead, p.qHead
	for range p.qLen {
		switch b := p.queue[r]; {
		case b == anonEntry:
			p.queue[w] = b
			w = p.next(w)
		case p.blocks[b].pos == uint32(r):
			p.queue[w] = b
			p.blocks[b].pos = uint32(w)
			w = p.next(w)
		}
		r = p.next(r)
	}
	p.qLen = p.numFree
}
