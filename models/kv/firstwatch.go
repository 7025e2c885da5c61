package kv

// WatchFirstBlocks makes the pool report to fn each hash it starts caching
// as a table's first block (Commit at index 0) and each such hash it stops
// caching (Allocate reused its block): what a prefix look-up (Peek) can
// find anything behind, so that a router can ask only the instances that
// cache a prompt's first block. A block's hash chains every block before
// it, so a first block's hash is no other block's. nil stops the reports.
// Cost O(1) per first block committed or evicted.
func (p *Pool) WatchFirstBlocks(fn func(h uint64, cached bool)) { p.watchFirst = fn }

// committedFirst reports block b's hash h, committed as a first block.
func (p *Pool) committedFirst(b BlockID, h uint64) {
	p.blocks[b].first = true
	p.watchFirst(h, true)
}
