package kv

// The free queue is a circular doubly-linked list threaded through the
// prev/next arrays: node i < n is block i, node n is the sentinel, so no
// per-block heap objects exist and every operation is O(1). The block after
// the sentinel is the head (evicted first); the one before it is the tail.

// sentinel returns the index of the list's sentinel node.
func (p *Pool) sentinel() int32 { return int32(len(p.refs)) }

// pushTail appends block b to the tail of the free queue.
func (p *Pool) pushTail(b int32) {
	s := p.sentinel()
	p.link(b, p.prev[s], s)
}

// pushHead inserts block b at the head of the free queue.
func (p *Pool) pushHead(b int32) {
	s := p.sentinel()
	p.link(b, s, p.next[s])
}

// link inserts b between the adjacent nodes before and after.
func (p *Pool) link(b, before, after int32) {
	p.prev[b], p.next[b] = before, after
	p.next[before], p.prev[after] = b, b
	p.numFree++
}

// unlink removes block b from the free queue.
func (p *Pool) unlink(b int32) {
	before, after := p.prev[b], p.next[b]
	p.next[before], p.prev[after] = after, before
	p.prev[b], p.next[b] = -1, -1
	p.numFree--
}

// head returns the block at the head of the free queue; the queue must not be
// empty.
func (p *Pool) head() int32 { return p.next[p.sentinel()] }
