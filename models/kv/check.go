package kv

import "fmt"

// Check verifies the pool's invariants and returns the first violation, or
// nil: refcounts ≥ 0; the free queue holds each free block exactly once (a
// live ring entry, or a placeholder for a free anonymous block) and no used
// block, with its counts right; every anonymous block's ID is kept once;
// FreeBlocks + UsedBlocks == NumBlocks; every shared block's hash maps back
// to it, no private block's hash is in the index, and every cache entry
// names a block holding its hash; no hashes without prefix caching. Cost
// O(NumBlocks): for tests and debug runs only.
func (p *Pool) Check() error {
	if err := p.checkBlocks(); err != nil {
		return err
	}
	if err := p.checkRing(); err != nil {
		return err
	}
	return p.checkHashes()
}

// References returns the references all tables hold, counting each table
// entry once, and the blocks held as counts (AllocateAnonymous): what the
// sequences' block tables and counts add up to. Cost O(NumBlocks): for
// audits.
func (p *Pool) References() int {
	n := p.owned + p.counted
	for _, blk := range p.blocks {
		n += int(blk.refs)
	}
	return n
}

// checkBlocks audits refcounts and each block's place in the free queue: a
// free block's live entry lies in the ring's occupied span; an anonymous
// block has refcount 0, no hash, and its ID in p.anon (exactly once, see
// checkAnonIDs), and the anonymous blocks not held by tables (p.owned) or
// counts (p.counted) are free; a used block has no entry.
func (p *Pool) checkBlocks() error {
	zero, anonymous := 0, 0
	for b, blk := range p.blocks {
		switch {
		case blk.refs < 0:
			return fmt.Errorf("kv: block %d has refcount %d", b, blk.refs)
		case blk.pos == anonymousPos && (blk.refs != 0 || blk.hash != noneHash || blk.private):
			return fmt.Errorf("kv: anonymous block %d has references or holds a hash", b)
		case blk.pos == anonymousPos:
			anonymous++
			continue
		case blk.refs > 0 && blk.pos != notQueued:
			return fmt.Errorf("kv: used block %d claims free queue slot %d", b, blk.pos)
		case blk.refs > 0:
			continue
		}
		zero++
		s := int(blk.pos)
		if blk.pos == notQueued || s >= len(p.queue) || (s-p.qHead+len(p.queue))%len(p.queue) >= p.qLen {
			return fmt.Errorf("kv: free block %d claims slot %d, outside the ring's occupied span", b, blk.pos)
		}
		if p.queue[s] != BlockID(b) {
			return fmt.Errorf("kv: free block %d claims slot %d, which holds %d", b, s, p.queue[s])
		}
	}
	free := len(p.anon) + p.unnamed - p.owned - p.counted
	if anonymous != len(p.anon) || p.owned < 0 || p.counted < 0 || p.unnamed < 0 || free < 0 {
		return fmt.Errorf("kv: %d anonymous blocks, but %d IDs, %d held as entries and %d as counts",
			anonymous, len(p.anon), p.owned, p.counted)
	}
	if zero+free+p.fresh != p.numFree || len(p.blocks)+p.fresh+p.unnamed != p.numBlocks {
		return fmt.Errorf("kv: %d blocks are free (%d fresh) but FreeBlocks is %d", zero+free+p.fresh, p.fresh, p.numFree)
	}
	return p.checkAnonIDs()
}

// checkAnonIDs audits p.anon: each entry a distinct anonymous block. With
// checkBlocks, which counts the anonymous blocks, it holds exactly those.
func (p *Pool) checkAnonIDs() error {
	seen := make([]bool, len(p.blocks))
	for _, b := range p.anon {
		if b < 0 || int(b) >= len(p.blocks) || seen[b] || p.blocks[b].pos != anonymousPos {
			return fmt.Errorf("kv: anonymous IDs hold %d, not an anonymous block, or twice", b)
		}
		seen[b] = true
	}
	return nil
}

// checkRing audits the ring's shape and counts: every entry names a block
// or stands for an anonymous one, live entries number FreeBlocks, the
// placeholders number the free anonymous blocks, and stale entries are within
// the bound that keeps the ring from overflowing. With checkBlocks, this
// makes the live entries exactly the free blocks, once each.
func (p *Pool) checkRing() error {
	n := len(p.blocks)
	if len(p.queue) > 2*p.numBlocks || p.qHead < 0 || p.qHead >= len(p.queue) || p.qLen < 0 || p.qLen > len(p.queue) ||
		p.hLen < 0 || p.hLen > p.qLen || p.fresh == 0 && p.hLen != 0 {
		return fmt.Errorf("kv: free queue ring of %d slots has head %d, length %d (%d ahead of %d fresh blocks)",
			len(p.queue), p.qHead, p.qLen, p.hLen, p.fresh)
	}
	live, placeholders, runs := 0, 0, 0 // live entries naming blocks, placeholders, runs of them
	for i, s := 0, p.qHead; i < p.qLen; i, s = i+1, p.next(s) {
		b := p.queue[s]
		switch {
		case b < 0:
			placeholders, runs = placeholders-int(b), runs+1
			if i < p.hLen && p.fresh > 0 {
				return fmt.Errorf("kv: free queue slot %d holds placeholders ahead of the fresh blocks", s)
			}
		case int(b) >= n:
			return fmt.Errorf("kv: free queue slot %d holds %d, outside [0, %d)", s, b, n)
		case p.blocks[b].pos == uint32(s):
			live++
		}
	}
	if free := p.freePlaceholders(); live+placeholders+p.fresh != p.numFree || placeholders != free || runs != p.runs {
		return fmt.Errorf("kv: free queue has %d live entries and %d placeholders in %d runs (%d counted), want %d free (%d anonymous)",
			live, placeholders, runs, p.runs, p.numFree, free)
	}
	if stale := p.qLen - live - runs; stale > p.numBlocks {
		return fmt.Errorf("kv: free queue has %d stale entries, more than the %d blocks", stale, n)
	}
	return nil
}

// checkHashes audits the agreement of per-block hashes and the cache index.
func (p *Pool) checkHashes() error {
	if err := p.cached.check(); err != nil {
		return err
	}
	hashed := 0
	for b, blk := range p.blocks {
		h := blk.hash
		if h == noneHash {
			if blk.private {
				return fmt.Errorf("kv: block %d is private but holds no hash", b)
			}
			continue
		}
		if !p.prefixCaching {
			return fmt.Errorf("kv: block %d has a hash without prefix caching", b)
		}
		if blk.private {
			if _, ok := p.cached.get(h); ok {
				return fmt.Errorf("kv: private block %d's hash %#x is in the shared index", b, h)
			}
			continue
		}
		hashed++
		if got, ok := p.cached.get(h); !ok || got != BlockID(b) {
			return fmt.Errorf("kv: block %d holds hash %#x but the cache maps it to %d (present %v)", b, h, got, ok)
		}
	}
	for h, b := range p.cached.all {
		if b < 0 || int(b) >= len(p.blocks) || p.blocks[b].hash != h {
			return fmt.Errorf("kv: cache maps hash %#x to block %d, which does not hold it", h, b)
		}
	}
	if hashed != p.cached.len() {
		return fmt.Errorf("kv: %d blocks carry shared hashes but the cache has %d entries", hashed, p.cached.len())
	}
	return nil
}
