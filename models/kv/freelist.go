package kv

// The free queue is a circular doubly-linked list threaded through the
// blocks' prev/next fields: node i < n of p.nodes is block i, node n is the
// sentinel, so no per-block heap objects exist and every operation is O(1).
// The block after the sentinel is the head (evicted first); the one before it
// is the tail. p.blocks is p.nodes without the sentinel, so a block index of
// NumBlocks panics instead of reaching it.

// sentinel returns the index of the list's sentinel node.
func (p *Pool) sentinel() int32 { return int32(len(p.blocks)) }

// pushTail appends block b to the tail of the free queue.
func (p *Pool) pushTail(b int32) {
	s := p.sentinel()
	p.link(b, p.nodes[s].prev, s)
}

// pushHead inserts block b at the head of the free queue.
func (p *Pool) pushHead(b int32) {
	s := p.sentinel()
	p.link(b, s, p.nodes[s].next)
}

// link inserts b between the adjacent nodes before and after.
func (p *Pool) link(b, before, after int32) {
	nodes := p.nodes
	nodes[b].prev, nodes[b].next = before, after
	nodes[before].next, nodes[after].prev = b, b
	p.numFree++
}

// unlink removes block b from the free queue.
func (p *Pool) unlink(b int32) {
	nodes := p.nodes
	before, after := nodes[b].prev, nodes[b].next
	nodes[before].next, nodes[after].prev = after, before
	nodes[b].prev, nodes[b].next = -1, -1
	p.numFree--
}

// head returns the block at the head of the free queue; the queue must not be
// empty.
func (p *Pool) head() int32 { return p.nodes[p.sentinel()].next }
