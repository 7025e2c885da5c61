package kv

// Private blocks.
//
// Most full blocks a sequence computes hold tokens unique to it: the part of
// its prompt past the shared segments, and everything it generates. Their
// chained hashes can never be produced by another sequence, so publishing
// them in the shared index (one random memory access per commit and one per
// eviction, millions per run) buys nothing. Only the sequence itself can
// want them again — after a recompute preemption, by remembering which
// blocks it held — so it hashes them then (CommitPrivate) and finds them
// with Held. A sequence done with its blocks frees them with FreeSettled:
// they queue at the tail and count as evicted when reused, exactly as
// committed blocks would, without a hash ever being computed. Observable
// behaviour is identical to committing every full block.

// CommitPrivate records that block table[i] holds the full block with
// chained hash h, without entering h in the shared index. The entry may
// change, as with Commit. No-op without prefix caching. Cost O(1). Panics as
// Commit does.
func (p *Pool) CommitPrivate(table []BlockID, i int, h uint64) {
	if !p.prefixCaching || !p.commitCheck(table, i, h) {
		return
	}
	blk := &p.blocks[table[i]]
	blk.hash, blk.private = h, true
}

// Held returns how many leading blocks[i] still hold hashes[i]: blocks a
// sequence once held whose content has not been evicted since. Pure.
// Cost O(result+1).
func (p *Pool) Held(blocks []BlockID, hashes []uint64) int {
	n := min(len(blocks), len(hashes))
	for i := range n {
		if h := hashes[i]; h == noneHash || blocks[i].anonymous() || p.blocks[blocks[i]].hash != h {
			return i
		}
	}
	return n
}

// FreeAmongBlocks returns how many of blocks have refcount 0 (and would
// leave the free queue if acquired). Cost O(len(blocks)).
func (p *Pool) FreeAmongBlocks(blocks []BlockID) int {
	n := 0
	for _, b := range blocks {
		if !b.anonymous() && p.blocks[b].refs == 0 {
			n++
		}
	}
	return n
}

// AcquireBlocks appends blocks to table, taking a reference on each (blocks
// that Held reported). Cost O(len(blocks)), amortised. Panics if a block
// holds no hash.
func (p *Pool) AcquireBlocks(table, blocks []BlockID) []BlockID {
	for _, b := range blocks {
		if b.anonymous() || p.blocks[b].hash == noneHash {
			panic("kv: acquiring a block that holds nothing")
		}
		p.ref(b)
		table = append(table, b)
	}
	return table
}

// FreeSettled is Free for a sequence that is done with its blocks for good
// (it finished, or its KV moved to a host tier): the full blocks
// table[contentFrom:contentTo] that carry no hash — private content whose
// hash was never computed, since nobody can ask for it again — are queued
// as cached blocks are (at the tail, counted as evicted when reused), so the
// free queue's order is exactly what committing them would have made it.
// Without prefix caching it is Free. Cost O(len(table)).
func (p *Pool) FreeSettled(table []BlockID, contentFrom, contentTo int) {
	if !p.prefixCaching {
		contentFrom, contentTo = 0, 0
	}
	p.free(table, contentFrom, contentTo)
}
