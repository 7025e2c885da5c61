package kv

import (
	"math"
	"slices"
)

// BlockID indexes a block in a Pool, from 0 to NumBlocks()−1. In a block
// table a negative entry stands for an anonymous block the table owns (see
// freelist.go): callers treat entries as opaque and hand the table back to
// the pool.
type BlockID int32

// anonymousEntry is the table entry for an anonymous block.
const anonymousEntry BlockID = -1

// anonymous reports whether table entry b is an anonymous block.
func (b BlockID) anonymous() bool { return b < 0 }

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
//	// after computing KV for block i (full): p.Commit(table, i, hs[i])
//	p.Free(table)                              // when the sequence finishes or is preempted
//
// All methods are O(blocks touched), amortised over the free queue's
// occasional compaction (see freelist.go), and allocate nothing beyond the
// caller's table growth. A Pool is not safe for concurrent use.
type Pool struct {
	blockSize     int
	prefixCaching bool
	numBlocks     int
	blocks        []block   // per-block state of the blocks ever used, by ID (the rest are fresh)
	queue         []BlockID // the free queue's ring, up to 2·NumBlocks slots (see freelist.go)
	anon          []BlockID // the IDs of anonymous blocks (see freelist.go)
	unnamed       int       // anonymous blocks without an ID
	fresh         int       // blocks never used: IDs len(blocks) on, free, queued after the ring's first hLen entries
	hLen          int       // while fresh > 0: ring entries ahead of the fresh blocks (freed to the head since)
	owned         int       // anonymous blocks tables hold as entries
	counted       int       // anonymous blocks held as counts (AllocateAnonymous), until claimed or freed (FreeCounted)
	qHead         int       // slot of the ring's first entry
	qLen          int       // ring entries, live and stale
	runs          int       // ring entries that are runs of placeholders
	numFree       int       // blocks with refcount 0: fresh, or a live ring entry's (a run of placeholders stands for several)
	cached        index     // hash → the block holding it (see index.go)
	stats         Stats
	logEvictions  bool                        // keep evictedLog (LogEvictions)
	evictedLog    []uint64                    // shareable hashes evicted since the last TakeEvicted
	watchFirst    func(h uint64, cached bool) // WatchFirstBlocks
}

// block is one block's state. The fields live together, not in parallel
// slices, because in a many-instance run the pools far exceed the CPU caches
// and each operation on a block touches most of them: one struct is one
// cache line (two for the quarter of 24-byte entries that straddle a line)
// where parallel slices cost a line per field.
type block struct {
	hash    uint64 // committed hash, 0 = none
	pos     uint32 // ring slot of the block's live free queue entry; notQueued while used; anonymousPos while anonymous
	refs    int32  // references held by tables
	private bool   // hash is known to its sequence only (CommitPrivate)
	first   bool   // hash was committed as a table's first block, with a watcher (WatchFirstBlocks)
}

// NewPool returns a pool of numBlocks free, uncached blocks of blockSize
// tokens each, queued in ID order. With prefixCaching false, Commit is a no-op
// and Match always returns 0. Cost O(1): a block's state is allocated when
// it is first used (freelist.go). Panics if numBlocks or blockSize is not
// positive or numBlocks does not fit an int32.
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
		numBlocks:     numBlocks,
		queue:         make([]BlockID, min(2*numBlocks, ringSlotsMin)),
		fresh:         numBlocks,
		numFree:       numBlocks,
	}
	// Each block holds at most one hash, so numBlocks entries always fit.
	// Without prefix caching the table stays empty and every look-up misses.
	if prefixCaching {
		p.cached = newIndex(numBlocks)
	} else {
		p.cached = newIndex(0)
	}
	return p
}

// NumBlocks returns the number of blocks in the pool.
func (p *Pool) NumBlocks() int { return p.numBlocks }

// BlockSize returns the number of tokens per block.
func (p *Pool) BlockSize() int { return p.blockSize }

// PrefixCaching reports whether the pool caches committed blocks.
func (p *Pool) PrefixCaching() bool { return p.prefixCaching }

// FreeBlocks returns how many blocks could be allocated now: those with
// refcount 0, cached or not.
func (p *Pool) FreeBlocks() int { return p.numFree }

// UsedBlocks returns how many blocks have refcount > 0.
func (p *Pool) UsedBlocks() int { return p.numBlocks - p.numFree }

// CachedBlocks returns how many blocks, in use or free, carry a hash in the
// shared index (Commit); private hashes (CommitPrivate) are not counted.
func (p *Pool) CachedBlocks() int { return p.cached.len() }

// RefCount returns how many tables hold the block of table entry b (a
// block ID never handed out: 0).
func (p *Pool) RefCount(b BlockID) int {
	switch {
	case b.anonymous():
		return 1
	case p.isFresh(b):
		return 0
	}
	return int(p.blocks[b].refs)
}

// BlockHash returns the hash committed to the block of table entry b, or 0
// if it has none.
func (p *Pool) BlockHash(b BlockID) uint64 {
	if b.anonymous() || p.isFresh(b) {
		return noneHash
	}
	return p.blocks[b].hash
}

// isFresh reports whether block ID b was never handed out (freelist.go).
func (p *Pool) isFresh(b BlockID) bool { return int(b) >= len(p.blocks) && int(b) < p.numBlocks }

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
		if p.blocks[p.mustFind(h)].refs == 0 {
			n++
		}
	}
	return n
}

// Acquire appends to table the blocks holding hashes (all cached, as Match
// reported), taking a reference on each; a block with refcount 0 leaves the
// free queue. Call it before Allocate, which may evict them. Returns the
// extended table. Cost O(len(hashes)), amortised. Panics if a hash is not
// cached.
func (p *Pool) Acquire(table []BlockID, hashes []uint64) []BlockID {
	for _, h := range hashes {
		b := p.mustFind(h)
		p.ref(b)
		table = append(table, b)
	}
	return table
}

// ref takes a reference on block b, taking it out of the free queue if it
// was free.
func (p *Pool) ref(b BlockID) {
	if p.blocks[b].refs == 0 {
		p.remove(b)
	}
	p.blocks[b].refs++
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
// block carries; an anonymous block is appended as such (see freelist.go).
// If fewer than n blocks are free it allocates nothing and returns table and
// false. Cost O(n), amortised. Panics if n < 0.
func (p *Pool) Allocate(table []BlockID, n int) ([]BlockID, bool) {
	if n < 0 {
		panic("kv: negative block count")
	}
	if n > p.numFree {
		return table, false
	}
	table = slices.Grow(table, n)
	for left := n; left > 0; {
		p.dropStale()
		if k := p.freshAtHead(left); k > 0 {
			table = p.takeFresh(table, k)
			left -= k
			continue
		}
		if k := p.placeholdersAtHead(left); k > 0 {
			table = p.takeAnonymous(table, k)
			left -= k
			continue
		}
		left--
		b := p.popHead()
		p.evict(b)
		p.blocks[b].refs = 1
		table = append(table, b)
	}
	p.stats.Allocated += int64(n)
	return table, true
}

// evict drops the hash block b holds, if any, as Allocate reuses it.
func (p *Pool) evict(b BlockID) {
	blk := &p.blocks[b]
	if blk.hash != noneHash {
		if !blk.private {
			p.cached.del(blk.hash)
			if p.logEvictions {
				p.evictedLog = append(p.evictedLog, blk.hash)
			}
			if blk.first {
				p.watchFirst(blk.hash, false)
			}
		}
		blk.hash, blk.private, blk.first = noneHash, false, false
		p.stats.Evicted++
	}
}

// AllocateAnonymous is Allocate for a caller that holds the n blocks as a
// count rather than in a table (see freelist.go): they leave the free queue
// exactly as Allocate's would, and become anonymous blocks the caller owns.
// Claim later appends them to the table that owns them. It reports false,
// allocating nothing, if fewer than n blocks are free. Cost O(n),
// amortised.
func (p *Pool) AllocateAnonymous(n int) bool {
	if n > p.numFree {
		return false
	}
	for left := n; left > 0; {
		p.dropStale()
		if k := p.freshAtHead(left); k > 0 {
			p.takeFreshAnonymous(k)
			left -= k
			continue
		}
		if k := p.placeholdersAtHead(left); k > 0 {
			p.takePlaceholders(k)
			p.counted += k
			left -= k
			continue
		}
		left--
		b := p.popHead()
		p.evict(b)
		p.blocks[b] = block{pos: anonymousPos} // anonymous from now on
		p.anon = append(p.anon, b)
		p.counted++
	}
	p.stats.Allocated += int64(n)
	return true
}

// Claim appends to table n of the blocks AllocateAnonymous handed out, as
// anonymous entries. Panics if fewer are unclaimed.
func (p *Pool) Claim(table []BlockID, n int) []BlockID {
	if n > p.counted {
		panic("kv: claiming more blocks than AllocateAnonymous handed out")
	}
	p.counted -= n
	p.owned += n
	return appendAnonymous(table, n)
}

// FreeCounted returns n of the blocks AllocateAnonymous handed out, held as
// a count and never claimed, to the free queue, as Free and FreeSettled
// would return them from a table: content of them hold settled content
// nobody can ask for again (FreeSettled: queued at the tail, counted as
// evicted when reused; without prefix caching, ordinary blocks at the
// head), the rest nothing (at the head). This is how a caller that holds
// blocks only as a count — the sliding-window groups of a hybrid model,
// whose blocks no one looks up — gives them back. Cost O(n − content),
// amortised. Panics if fewer than n are held as a count or content is not
// in [0, n].
func (p *Pool) FreeCounted(n, content int) {
	if n > p.counted || content < 0 || content > n {
		panic("kv: freeing more counted blocks than AllocateAnonymous handed out")
	}
	p.counted -= n
	if !p.prefixCaching {
		content = 0
	}
	if content > 0 {
		p.addPlaceholders(content)
	}
	for range n - content {
		b := p.popAnonymous()
		p.blocks[b] = block{}
		p.pushHead(b)
	}
}

// Commit records that block table[i] holds the full block whose chained
// hash is h, so later Match calls find it. If another block already holds
// h, it stays uncached (first writer wins); committing the hash it already
// holds is a no-op. The entry may change (an anonymous block stops being
// one). No-op without prefix caching. Cost O(1). Panics if h is 0, the block
// is free, or it already holds a different hash.
func (p *Pool) Commit(table []BlockID, i int, h uint64) {
	if !p.prefixCaching || !p.commitCheck(table, i, h) {
		return
	}
	if b := table[i]; p.cached.put(h, b) {
		p.blocks[b].hash = h
		if i == 0 && p.watchFirst != nil {
			p.committedFirst(b, h)
		}
	}
}

// commitCheck panics as Commit documents and reports whether committing h to
// table[i] changes anything (false if it already holds h). An anonymous
// entry becomes its block, in use by this table.
func (p *Pool) commitCheck(table []BlockID, i int, h uint64) bool {
	if h == noneHash {
		panic("kv: commit of hash 0")
	}
	if table[i].anonymous() { // in use, no hash: nothing to check or read
		b := p.popAnonymous()
		p.blocks[b] = block{pos: notQueued, refs: 1}
		p.owned--
		table[i] = b
		return true
	}
	blk := &p.blocks[table[i]]
	switch {
	case blk.refs == 0:
		panic("kv: commit to a free block")
	case blk.hash == h:
		return false
	case blk.hash != noneHash:
		panic("kv: block already holds a different hash")
	}
	return true
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
func (p *Pool) Free(table []BlockID) { p.free(table, 0, 0) }

// free is Free, but a block of table[contentFrom:contentTo] that carries no
// hash is queued as anonymous content (see FreeSettled).
func (p *Pool) free(table []BlockID, contentFrom, contentTo int) {
	for i := len(table) - 1; i >= 0; i-- {
		b := table[i]
		if b.anonymous() && i >= contentFrom && i < contentTo {
			i = p.returnAnonymous(table, contentFrom, i) // the run of them ending at i
			continue
		}
		if b.anonymous() { // not settled content: an ordinary uncached block
			p.owned--
			b = p.popAnonymous()
			p.blocks[b] = block{}
			p.pushHead(b)
			continue
		}
		blk := &p.blocks[b]
		if blk.refs <= 0 {
			panic("kv: free of a free block")
		}
		blk.refs--
		switch {
		case blk.refs > 0:
		case blk.hash != noneHash:
			p.pushTail(b)
		case i >= contentFrom && i < contentTo:
			p.pushAnon(b)
		default:
			p.pushHead(b)
		}
	}
}
