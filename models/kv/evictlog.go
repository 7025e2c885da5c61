package kv

// LogEvictions makes the pool keep the shareable hashes Allocate evicts,
// for TakeEvicted: what a write-back lower tier receives.
func (p *Pool) LogEvictions() { p.logEvictions = true }

// TakeEvicted returns the shareable hashes evicted since its last call,
// oldest first, and forgets them; the slice is reused by the next
// eviction.
func (p *Pool) TakeEvicted() []uint64 {
	log := p.evictedLog
	p.evictedLog = p.evictedLog[:0]
	return log
}
