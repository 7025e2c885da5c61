package kv

import "fmt"

// Check verifies the pool's invariants and returns the first violation, or
// nil: refcounts ≥ 0; the free queue is a well-linked cycle holding exactly
// the refcount-0 blocks, and used blocks carry no links; FreeBlocks +
// UsedBlocks == NumBlocks; every shared block's hash maps back to it, no
// private block's hash is in the index, and every cache entry names a block
// holding its hash; no hashes without prefix caching. Cost O(NumBlocks): for
// tests and debug runs only.
func (p *Pool) Check() error {
	if err := p.checkQueue(); err != nil {
		return err
	}
	return p.checkHashes()
}

// checkQueue audits refcounts and the free queue's links and membership.
func (p *Pool) checkQueue() error {
	n := p.sentinel()
	zero := 0
	for b, blk := range p.blocks {
		switch {
		case blk.refs < 0:
			return fmt.Errorf("kv: block %d has refcount %d", b, blk.refs)
		case blk.refs == 0:
			zero++
		case blk.prev != -1 || blk.next != -1:
			return fmt.Errorf("kv: used block %d has free queue links %d, %d", b, blk.prev, blk.next)
		}
	}
	if zero != p.numFree {
		return fmt.Errorf("kv: %d blocks have refcount 0 but FreeBlocks is %d", zero, p.numFree)
	}
	nodes, s, seen := p.nodes, n, 0
	for cur := nodes[s].next; cur != s; cur = nodes[cur].next {
		switch {
		case cur < 0 || cur > n:
			return fmt.Errorf("kv: free queue links to %d, outside [0, %d]", cur, n)
		case seen == zero:
			return fmt.Errorf("kv: free queue longer than the %d free blocks (cycle?)", zero)
		case nodes[cur].refs != 0:
			return fmt.Errorf("kv: block %d in free queue has refcount %d", cur, nodes[cur].refs)
		case nodes[cur].next < 0 || nodes[cur].next > n || nodes[nodes[cur].next].prev != cur:
			return fmt.Errorf("kv: free queue back link after block %d is broken", cur)
		}
		seen++
	}
	if seen != zero || nodes[nodes[s].next].prev != s {
		return fmt.Errorf("kv: free queue holds %d blocks, want %d", seen, zero)
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
