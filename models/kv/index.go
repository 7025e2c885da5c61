package kv

import (
	"fmt"
	"math/bits"
)

// index is the prefix cache's map from block hash to the block holding it:
// an open-addressing hash table with linear probing, sized once so that it is
// at most half full and never grows or rehashes. Its slots are allocated by
// the first put: a pool whose blocks are all private (many synthetic
// workloads) never pays for them.
//
// Key 0 (noneHash, which AppendBlockHashes never produces) marks an empty
// slot. Deletion shifts later entries of the probe run back into the hole
// instead of leaving tombstones, so every run stays as short as the live
// entries make it, however many insert/delete cycles the table has seen.
//
// A go map did the same job; profiles of long simulations spent almost half
// their time in its insert, delete and look-up, which this table does in a
// few instructions plus, typically, one cache miss.
type index struct {
	slots []slot // len a power of two ≥ 2 × capacity, once allocated; nil before
	mask  uint64 // len(slots) − 1
	shift uint8  // 64 − log2(len(slots)): home slot = high bits of the folded key
	n     int    // occupied slots
	limit int    // capacity: most entries put accepts
}

// slot is one table entry. Key and value side by side (16 bytes with
// padding) make a hit touch one cache line; parallel key and value slices
// (12 bytes a slot) probe denser but split a hit over two lines. On
// BenchmarkIndexChurn and BenchmarkPoolSimLike the two layouts measured the
// same within noise, so the simpler one stays.
type slot struct {
	key uint64 // 0 = empty
	val BlockID
}

// newIndex returns an empty table for up to capacity entries. Cost O(1);
// the first put pays O(capacity). Panics if capacity is negative.
func newIndex(capacity int) index {
	if capacity < 0 {
		panic("kv: negative index capacity")
	}
	return index{limit: capacity}
}

// allocate gives the table its slots.
func (x *index) allocate() {
	size := uint64(2)
	for size < 2*uint64(x.limit) {
		size *= 2
	}
	x.slots = make([]slot, size)
	x.mask = size - 1
	x.shift = uint8(64 - bits.TrailingZeros64(size))
}

// home returns the slot where a probe for key h starts. The keys are already
// well mixed, but folding them with a Fibonacci multiply and taking the high
// bits keeps clustering low for any key set, at the cost of one multiply.
func (x *index) home(h uint64) uint64 { return (h * golden) >> x.shift }

// find returns the slot holding h, or the empty slot ending its probe run
// and false. h must not be 0. Cost O(probe run).
// The table must have its slots.
func (x *index) find(h uint64) (uint64, bool) {
	for i := x.home(h); ; i = (i + 1) & x.mask {
		switch x.slots[i].key {
		case h:
			return i, true
		case noneHash:
			return i, false
		}
	}
}

// len returns the number of entries.
func (x *index) len() int { return x.n }

// get returns the block stored under h, and whether there is one. get(0) is
// always false. Cost O(probe run), expected O(1).
func (x *index) get(h uint64) (BlockID, bool) {
	if x.n == 0 {
		return 0, false
	}
	for i := x.home(h); ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.key == noneHash {
			return 0, false
		}
		if s.key == h {
			return s.val, true
		}
	}
}

// put stores b under h unless h is already present, in which case it keeps
// the existing block; it reports whether it stored b. Cost O(probe run).
// Panics if h is 0 or the table already holds its capacity.
func (x *index) put(h uint64, b BlockID) bool {
	if h == noneHash {
		panic("kv: index key 0")
	}
	if x.slots == nil {
		x.allocate()
	}
	i, ok := x.find(h)
	if ok {
		return false
	}
	if x.n >= x.limit {
		panic("kv: index full")
	}
	x.slots[i] = slot{key: h, val: b}
	x.n++
	return true
}

// del removes h, reporting whether it was present. It closes the hole by
// backward shift: each later entry of the run whose home is not cyclically
// after the hole moves into it, and the hole moves to where it was. Cost
// O(probe run).
func (x *index) del(h uint64) bool {
	if h == noneHash || x.n == 0 {
		return false
	}
	hole, ok := x.find(h)
	if !ok {
		return false
	}
	for j := (hole + 1) & x.mask; x.slots[j].key != noneHash; j = (j + 1) & x.mask {
		// The entry at j may fill the hole iff its home lies in [hole, j)
		// cyclically, i.e. its home is at least as far back as the hole.
		if (j-x.home(x.slots[j].key))&x.mask >= (j-hole)&x.mask {
			x.slots[hole] = x.slots[j]
			hole = j
		}
	}
	x.slots[hole] = slot{}
	x.n--
	return true
}

// all yields every entry in slot order. The table must not change during
// the iteration. Cost O(len(slots)).
func (x *index) all(yield func(h uint64, b BlockID) bool) {
	for _, s := range x.slots {
		if s.key != noneHash && !yield(s.key, s.val) {
			return
		}
	}
}

// check verifies that the entry count is right and every entry is reachable
// from its home slot without crossing an empty slot, and is the first copy of
// its key on that path (so there are no duplicates). Cost O(len(slots)).
func (x *index) check() error {
	n := 0
	for i, s := range x.slots {
		if s.key == noneHash {
			continue
		}
		n++
		if at, ok := x.find(s.key); !ok || at != uint64(i) {
			return fmt.Errorf("kv: index entry %#x in slot %d is unreachable or duplicated", s.key, i)
		}
	}
	if n != x.n || n > x.limit {
		return fmt.Errorf("kv: index has %d entries, counts %d, capacity %d", n, x.n, x.limit)
	}
	return nil
}
