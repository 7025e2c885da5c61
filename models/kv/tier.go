package kv

import "fmt"

// Tier is a lower KV tier — host DRAM, a local disk, a shared store — as a
// set of full blocks known by their prefix hashes (hash.go), at most
// capacity of them, evicted least recently used first. It holds copies:
// a block offloaded from HBM stays in HBM until HBM frees it, and one
// copied up from here stays here, as vLLM's offloading connector, LMCache
// and Dynamo's KVBM keep their lower tiers. The caller decides what is
// offloaded when, and where an evicted block goes next (the tier below,
// or nowhere).
//
// A block put in the tier is readable from a time the caller gives (its
// write lands then); until then a reader waits for it.
//
// Part of the capacity may be reserved for KV that is not cached (a host
// tier's swapped-out sequences, vLLM V0's swap space): reserved room
// holds no hashes and is never evicted; Reserve makes it by evicting
// cached blocks.
//
// A Tier is slots 0…capacity−1 on one ring in LRU order (prev/next, the
// most recent at the tail) and the hash → slot table of the prefix cache
// (index.go). Nothing allocates after NewTier but the table's first put.
type Tier struct {
	name       string
	hashes     []uint64 // slot → hash; 0 = free
	readyNs    []int64  // slot → when its block can be read
	prev, next []int32  // the LRU ring over used slots; head = least recent
	head       int32    // −1 when empty
	free       []int32  // unused slots
	reserved   int      // free slots held by Reserve: at most len(free)
	index      index
}

// NewTier returns an empty tier of capacity blocks. It panics if capacity
// is not positive (a scenario refuses such a tier before).
func NewTier(name string, capacity int) *Tier {
	if capacity <= 0 {
		panic("kv: tier capacity must be positive")
	}
	t := &Tier{name: name, hashes: make([]uint64, capacity), readyNs: make([]int64, capacity),
		prev: make([]int32, capacity),
		next: make([]int32, capacity), head: -1, free: make([]int32, capacity), index: newIndex(capacity)}
	for i := range t.free {
		t.free[i] = int32(capacity - 1 - i)
	}
	return t
}

// Name is the tier's name, for errors and metrics.
func (t *Tier) Name() string { return t.name }

// Len is how many cached blocks the tier holds.
func (t *Tier) Len() int { return len(t.hashes) - len(t.free) }

// Reserved is how much of the capacity Reserve holds.
func (t *Tier) Reserved() int { return t.reserved }

// Capacity is the most blocks the tier holds.
func (t *Tier) Capacity() int { return len(t.hashes) }

// Has reports whether the tier holds the block of hash h.
func (t *Tier) Has(h uint64) bool {
	_, ok := t.index.get(h)
	return ok
}

// Match is how many leading blocks of hashes the tier holds: the prefix
// a request finds here. Cost O(matched + 1).
func (t *Tier) Match(hashes []uint64) int {
	for i, h := range hashes {
		if !t.Has(h) {
			return i
		}
	}
	return len(hashes)
}

// Lookup reports whether the tier holds the block of hash h and from when
// it can be read.
func (t *Tier) Lookup(h uint64) (readyNs int64, ok bool) {
	s, ok := t.index.get(h)
	if !ok {
		return 0, false
	}
	return t.readyNs[s], true
}

// Put stores the block of hash h, readable from readyNs, or makes it the
// most recently used if the tier holds it already (it keeps its earlier
// ready time). When the tier is full the least recently used block makes
// room: Put returns its hash and true, for the caller to send down a tier
// or drop. A tier wholly reserved stores nothing (it reports no eviction).
// h must not be 0 (no block hash is).
func (t *Tier) Put(h uint64, readyNs int64) (evicted uint64, ok bool) {
	if s, found := t.index.get(h); found {
		t.unlink(int32(s))
		t.pushTail(int32(s))
		return 0, false
	}
	if t.reserved == len(t.hashes) {
		return 0, false
	}
	if len(t.free) == t.reserved {
		evicted, ok = t.evictOldest(), true
	}
	n := len(t.free)
	s := t.free[n-1]
	t.free = t.free[:n-1]
	t.hashes[s], t.readyNs[s] = h, readyNs
	t.index.put(h, BlockID(s))
	t.pushTail(s)
	return evicted, ok
}

// evictOldest drops the least recently used block, frees its slot and
// returns its hash. The tier must hold a block.
func (t *Tier) evictOldest() uint64 {
	s := t.head
	h := t.hashes[s]
	t.unlink(s)
	t.index.del(h)
	t.hashes[s] = 0
	t.free = append(t.free, s)
	return h
}

// Reserve holds room for n blocks of uncached KV, evicting the least
// recently used cached blocks as needed; their hashes are appended to
// evicted. It reports false, changing nothing, when fewer than n blocks
// of the capacity are unreserved.
func (t *Tier) Reserve(n int, evicted []uint64) ([]uint64, bool) {
	if t.reserved+n > len(t.hashes) {
		return evicted, false
	}
	for len(t.free) < t.reserved+n {
		evicted = append(evicted, t.evictOldest())
	}
	t.reserved += n // reserved room is free slots no Put may take
	return evicted, true
}

// Unreserve gives back n blocks of reserved room.
func (t *Tier) Unreserve(n int) {
	if n > t.reserved {
		panic("kv: tier unreserving more than it reserved")
	}
	t.reserved -= n
}

// TouchOne makes the block of hash h the most recently used and reports
// whether the tier holds it: one look-up.
func (t *Tier) TouchOne(h uint64) bool {
	s, ok := t.index.get(h)
	if ok {
		t.unlink(int32(s))
		t.pushTail(int32(s))
	}
	return ok
}

// Touch makes the tier's blocks among hashes the most recently used, in
// order (a request read them).
func (t *Tier) Touch(hashes []uint64) {
	for _, h := range hashes {
		if s, ok := t.index.get(h); ok {
			t.unlink(int32(s))
			t.pushTail(int32(s))
		}
	}
}

// unlink takes used slot s off the ring.
func (t *Tier) unlink(s int32) {
	if t.next[s] == s { // the only one
		t.head = -1
		return
	}
	p, n := t.prev[s], t.next[s]
	t.next[p], t.prev[n] = n, p
	if t.head == s {
		t.head = n
	}
}

// pushTail puts slot s on the ring as the most recently used.
func (t *Tier) pushTail(s int32) {
	if t.head < 0 {
		t.head, t.prev[s], t.next[s] = s, s, s
		return
	}
	tail := t.prev[t.head]
	t.prev[s], t.next[s] = tail, t.head
	t.next[tail], t.prev[t.head] = s, s
}

// Check audits the tier: the ring holds exactly the used slots, each
// hash is in the table at its slot, and the free slots hold none.
// Cost O(capacity).
func (t *Tier) Check() error {
	used := 0
	if t.head >= 0 {
		for s := t.head; ; {
			h := t.hashes[s]
			if b, ok := t.index.get(h); !ok || int32(b) != s || h == 0 {
				return fmt.Errorf("kv: tier %s: slot %d's hash %#x is not in its table", t.name, s, h)
			}
			used++
			if used > len(t.hashes) {
				return fmt.Errorf("kv: tier %s: its LRU ring does not close", t.name)
			}
			if s = t.next[s]; s == t.head {
				break
			}
		}
	}
	if used != t.Len() || t.index.len() != used {
		return fmt.Errorf("kv: tier %s: %d blocks on its ring, %d in its table, %d counted", t.name, used,
			t.index.len(), t.Len())
	}
	for _, s := range t.free {
		if t.hashes[s] != 0 && t.Has(t.hashes[s]) {
			if b, _ := t.index.get(t.hashes[s]); int32(b) == s {
				return fmt.Errorf("kv: tier %s: free slot %d still holds a block", t.name, s)
			}
		}
	}
	return nil
}
