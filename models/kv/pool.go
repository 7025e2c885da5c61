package kv

import "math"

// BlockID indexes a block in a Pool, from 0 to NumBlocks()−1.
type BlockID int32

// Stats are a Pool's cumulative counters since NewPool.
type Stats struct {
	Allocated     int64 // blocks handed out by Allocate
	Evicted       int64 // cached hashes dropped because Allocate reused their block
	HitBlocks     int64 // leading blocks Match found cached, summed over calls
	QueriedBlocks int64 // hashes passed to Match, summed over calls
}

// Pool is a fixed set of KV blocks with reference counts and, optionally, a
// prefix cache keyed by chained block hashes (see AppendBlockHashes).
//
// A block is either used (refcount > 0, held by one or more sequences'
// tables) or free (refcount 0, in the free queue). A free block may still
// carry a hash: it stays matchable until Allocate takes it from the head of
// the queue and evicts the hash, so the queue order is the LRU eviction order.
//
// An engine admitting a sequence with hashes hs follows this order:
//
//	hit := p.Match(hs)                         // leading blocks already cached
//	need := blocksFor(tokens) - hit            // fresh blocks beyond the hit
//	if need > p.FreeBlocks()-p.FreeAmong(hs[:hit]) { /* cannot admit */ }
//	table = p.Acquire(table, hs[:hit])         // before Allocate, which may evict them
//	table, _ = p.Allocate(table, need)
//	// after computing KV for block i (full): p.Commit(table[i], hs[i])
//	p.Free(table)                              // when the sequence finishes or is preempted
//
// All methods are O(blocks touched) and allocate nothing in steady state
// beyond the caller's table growth. A Pool is not safe for concurrent use.
type Pool struct {
	blockSize     int
	prefixCaching bool
	refs          []int32  // per block: references held by tables
	hashes        []uint64 // per block: committed hash, 0 = none
	private       []bool   // per block: its hash is known to its sequence only (CommitPrivate)
	prev, next    []int32  // free queue links, len NumBlocks+1 (sentinel last)
	numFree       int
	cached        index // hash → the block holding it (see index.go)
	stats         Stats
}

// NewPool returns a pool of numBlocks free, uncached blocks of blockSize
// tokens each, queued in ID order. With prefixCaching false, Commit is a no-op
// and Match always returns 0. Cost O(numBlocks). Panics if numBlocks or
// blockSize is not positive or numBlocks does not fit an int32.
func NewPool(numBlocks, blockSize int, prefixCaching bool) *Pool {
	if numBlocks <= 0 || numBlocks >= math.MaxInt32 {
		panic("kv: block count must be in [1, MaxInt32)")
	}
	if blockSize <= 0 {
		panic("kv: block size must be positive")
	}
	p := &Pool{
		blockSize:     blockSize,
		prefixCaching: prefixCaching,
		refs:          make([]int32, numBlocks),
		hashes:        make([]uint64, numBlocks),
		private:       make([]bool, numBlocks),
		prev:          make([]int32, numBlocks+1),
		next:          make([]int32, numBlocks+1),
	}
	// Each block holds at most one hash, so numBlocks entries always fit.
	// Without prefix caching the table stays empty and every look-up misses.
	if prefixCaching {
		p.cached = newIndex(numBlocks)
	} else {
		p.cached = newIndex(0)
	}
	s := p.sentinel()
	p.prev[s], p.next[s] = s, s
	for b := range int32(numBlocks) {
		p.pushTail(b)
	}
	return p
}

// NumBlocks returns the number of blocks in the pool.
func (p *Pool) NumBlocks() int { return len(p.refs) }

// BlockSize returns the number of tokens per block.
func (p *Pool) BlockSize() int { return p.blockSize }

// PrefixCaching reports whether the pool caches committed blocks.
func (p *Pool) PrefixCaching() bool { return p.prefixCaching }

// FreeBlocks returns how many blocks could be allocated now: those with
// refcount 0, cached or not.
func (p *Pool) FreeBlocks() int { return p.numFree }

// UsedBlocks returns how many blocks have refcount > 0.
func (p *Pool) UsedBlocks() int { return len(p.refs) - p.numFree }

// CachedBlocks returns how many blocks carry a hash, in use or free.
func (p *Pool) CachedBlocks() int { return p.cached.len() }

// RefCount returns how many tables hold block b.
func (p *Pool) RefCount(b BlockID) int { return int(p.refs[b]) }

// BlockHash returns the hash committed to block b, or 0 if it has none.
func (p *Pool) BlockHash(b BlockID) uint64 { return p.hashes[b] }

// Stats returns the cumulative counters.
func (p *Pool) Stats() Stats { return p.stats }

// Match returns how many leading hashes are cached, whether their blocks are
// held by running sequences or sit in the free queue. It changes no block
// state; it adds len(hashes) to QueriedBlocks and the result to HitBlocks
// (use Peek for look-ups that should not count, such as a router's).
// Always 0 without prefix caching. Cost O(result+1) hash look-ups.
func (p *Pool) Match(hashes []uint64) int {
	hit := p.Peek(hashes)
	p.stats.QueriedBlocks += int64(len(hashes))
	p.stats.HitBlocks += int64(hit)
	return hit
}

// Peek is Match without touching the counters.
func (p *Pool) Peek(hashes []uint64) int {
	for i, h := range hashes {
		if _, ok := p.cached.get(h); !ok {
			return i
		}
	}
	return len(hashes)
}

// FreeAmong returns how many of the blocks holding hashes (all cached, as
// Match reported) have refcount 0. Acquiring them takes them out of the free
// queue, so a caller that will Acquire hashes and then Allocate n blocks needs
// n ≤ FreeBlocks() − FreeAmong(hashes). Cost O(len(hashes)).
func (p *Pool) FreeAmong(hashes []uint64) int {
	n := 0
	for _, h := range hashes {
		if p.refs[p.mustFind(h)] == 0 {
			n++
		}
	}
	return n
}

// Acquire appends to table the blocks holding hashes (all cached, as Match
// reported), taking a reference on each; a block with refcount 0 leaves the
// free queue. Call it before Allocate, which may evict them. Returns the
// extended table. Cost O(len(hashes)). Panics if a hash is not cached.
func (p *Pool) Acquire(table []BlockID, hashes []uint64) []BlockID {
	for _, h := range hashes {
		b := p.mustFind(h)
		if p.refs[b] == 0 {
			p.unlink(int32(b))
		}
		p.refs[b]++
		table = append(table, b)
	}
	return table
}

// mustFind returns the block holding hash h, panicking if there is none.
func (p *Pool) mustFind(h uint64) BlockID {
	b, ok := p.cached.get(h)
	if !ok {
		panic("kv: hash not cached (Acquire without Match, or Allocate evicted it)")
	}
	return b
}

// Allocate appends n fresh blocks to table, taken from the head of the free
// queue (least recently freed first) with refcount 1, evicting the hash a
// block carries. If fewer than n blocks are free it allocates nothing and
// returns table and false. Cost O(n). Panics if n < 0.
func (p *Pool) Allocate(table []BlockID, n int) ([]BlockID, bool) {
	if n < 0 {
		panic("kv: negative block count")
	}
	if n > p.numFree {
		return table, false
	}
	for range n {
		b := p.head()
		p.unlink(b)
		if h := p.hashes[b]; h != noneHash {
			if !p.private[b] {
				p.cached.del(h)
			}
			p.hashes[b], p.private[b] = noneHash, false
			p.stats.Evicted++
		}
		p.refs[b] = 1
		table = append(table, BlockID(b))
	}
	p.stats.Allocated += int64(n)
	return table, true
}

// Commit records that block b holds the full block whose chained hash is h,
// so later Match calls find it. If another block already holds h, b stays
// uncached (first writer wins); committing the hash b already holds is a
// no-op. No-op without prefix caching. Cost O(1). Panics if h is 0, b is
// free, or b already holds a different hash.
func (p *Pool) Commit(b BlockID, h uint64) {
	if !p.prefixCaching {
		return
	}
	switch {
	case h == noneHash:
		panic("kv: commit of hash 0")
	case p.refs[b] == 0:
		panic("kv: commit to a free block")
	case p.hashes[b] == h:
		return
	case p.hashes[b] != noneHash:
		panic("kv: block already holds a different hash")
	}
	if p.cached.put(h, b) {
		p.hashes[b] = h
	}
}

// Free drops one reference on each block of table, walking from the last
// block to the first. A block reaching refcount 0 joins the free queue:
//
//   - a cached block goes to the tail, so it stays matchable as long as
//     possible, and a sequence's tail blocks (walked first) are evicted before
//     its head blocks, which other sequences are likelier to share;
//   - an uncached block goes to the head, since it holds nothing reusable and
//     evicting it first spares cached ones.
//
// Cost O(len(table)). Panics if a block in table is already free.
func (p *Pool) Free(table []BlockID) {
	for i := len(table) - 1; i >= 0; i-- {
		b := table[i]
		if p.refs[b] <= 0 {
			panic("kv: free of a free block")
		}
		p.refs[b]--
		if p.refs[b] > 0 {
			continue
		}
		if p.hashes[b] != noneHash {
			p.pushTail(int32(b))
		} else {
			p.pushHead(int32(b))
		}
	}
}
