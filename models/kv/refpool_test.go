package kv

// refPool is the Pool as it was before the free queue became a ring: the
// same semantics with the free queue as an intrusive doubly-linked list
// (node i < n is block i, node n the sentinel; the block after the sentinel
// is the head). It is the oracle of TestPoolMatchesReference, which holds
// Pool to exactly this observable behaviour. Only what the test needs is
// kept; panics for misuse are left to Pool.
type refPool struct {
	prefixCaching bool
	nodes         []refBlock // blocks plus the sentinel
	numFree       int
	cached        index
	stats         Stats
}

// refBlock is one block's state in a refPool.
type refBlock struct {
	hash       uint64
	prev, next int32 // free queue links; -1 while the block is used
	refs       int32
	private    bool
}

func newRefPool(numBlocks int, prefixCaching bool) *refPool {
	p := &refPool{prefixCaching: prefixCaching, nodes: make([]refBlock, numBlocks+1)}
	p.cached = newIndex(0)
	if prefixCaching {
		p.cached = newIndex(numBlocks)
	}
	s := p.sentinel()
	p.nodes[s].prev, p.nodes[s].next = s, s
	for b := range int32(numBlocks) {
		p.pushTail(b)
	}
	return p
}

func (p *refPool) sentinel() int32 { return int32(len(p.nodes) - 1) }

func (p *refPool) pushTail(b int32) { s := p.sentinel(); p.link(b, p.nodes[s].prev, s) }

func (p *refPool) pushHead(b int32) { s := p.sentinel(); p.link(b, s, p.nodes[s].next) }

func (p *refPool) link(b, before, after int32) {
	p.nodes[b].prev, p.nodes[b].next = before, after
	p.nodes[before].next, p.nodes[after].prev = b, b
	p.numFree++
}

func (p *refPool) unlink(b int32) {
	before, after := p.nodes[b].prev, p.nodes[b].next
	p.nodes[before].next, p.nodes[after].prev = after, before
	p.nodes[b].prev, p.nodes[b].next = -1, -1
	p.numFree--
}

// appendQueue appends the free queue, head to tail, to dst.
func (p *refPool) appendQueue(dst []BlockID) []BlockID {
	for cur := p.nodes[p.sentinel()].next; cur != p.sentinel(); cur = p.nodes[cur].next {
		dst = append(dst, BlockID(cur))
	}
	return dst
}

func (p *refPool) Match(hashes []uint64) int {
	hit := p.Peek(hashes)
	p.stats.QueriedBlocks += int64(len(hashes))
	p.stats.HitBlocks += int64(hit)
	return hit
}

func (p *refPool) Peek(hashes []uint64) int {
	for i, h := range hashes {
		if _, ok := p.cached.get(h); !ok {
			return i
		}
	}
	return len(hashes)
}

func (p *refPool) FreeAmong(hashes []uint64) int {
	n := 0
	for _, h := range hashes {
		if b, _ := p.cached.get(h); p.nodes[b].refs == 0 {
			n++
		}
	}
	return n
}

func (p *refPool) Acquire(table []BlockID, hashes []uint64) []BlockID {
	for _, h := range hashes {
		b, _ := p.cached.get(h)
		p.ref(b)
		table = append(table, b)
	}
	return table
}

func (p *refPool) ref(b BlockID) {
	if p.nodes[b].refs == 0 {
		p.unlink(int32(b))
	}
	p.nodes[b].refs++
}

func (p *refPool) Allocate(table []BlockID, n int) ([]BlockID, bool) {
	if n > p.numFree {
		return table, false
	}
	for range n {
		b := p.nodes[p.sentinel()].next
		p.unlink(b)
		blk := &p.nodes[b]
		if blk.hash != noneHash {
			if !blk.private {
				p.cached.del(blk.hash)
			}
			blk.hash, blk.private = noneHash, false
			p.stats.Evicted++
		}
		blk.refs = 1
		table = append(table, BlockID(b))
	}
	p.stats.Allocated += int64(n)
	return table, true
}

func (p *refPool) Commit(b BlockID, h uint64) {
	if !p.prefixCaching || p.nodes[b].hash == h {
		return
	}
	if p.cached.put(h, b) {
		p.nodes[b].hash = h
	}
}

func (p *refPool) CommitPrivate(b BlockID, h uint64) {
	if p.prefixCaching && p.nodes[b].hash != h {
		p.nodes[b].hash, p.nodes[b].private = h, true
	}
}

func (p *refPool) Free(table []BlockID) {
	for i := len(table) - 1; i >= 0; i-- {
		b := table[i]
		blk := &p.nodes[b]
		blk.refs--
		switch {
		case blk.refs > 0:
		case blk.hash != noneHash:
			p.pushTail(int32(b))
		default:
			p.pushHead(int32(b))
		}
	}
}

func (p *refPool) Held(blocks []BlockID, hashes []uint64) int {
	n := min(len(blocks), len(hashes))
	for i := range n {
		if h := hashes[i]; h == noneHash || p.nodes[blocks[i]].hash != h {
			return i
		}
	}
	return n
}

func (p *refPool) FreeAmongBlocks(blocks []BlockID) int {
	n := 0
	for _, b := range blocks {
		if p.nodes[b].refs == 0 {
			n++
		}
	}
	return n
}

func (p *refPool) AcquireBlocks(table, blocks []BlockID) []BlockID {
	for _, b := range blocks {
		p.ref(b)
		table = append(table, b)
	}
	return table
}
