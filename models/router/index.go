package router

import "slices"

// The routers' own prefix indexes: what a router believes each instance
// caches, learnt from its own decisions rather than from KV events.

// TTLIndex predicts instances' prefix caches from a router's decisions, as
// Dynamo's router does without KV events: it remembers, per (instance,
// block hash), when it last routed a request holding that block there, and
// forgets the entry ttl after that. Memory is O(live entries); each call
// costs O(len(hashes)) plus amortised O(1) per expired entry.
type TTLIndex struct {
	ttlNs int64
	last  map[ttlKey]int64 // routed-at time of each live entry
	fifo  []ttlEntry       // writes in time order, for expiry
	head  int              // fifo[:head] is expired
	// first lists, by a recorded prompt's first block, the instances
	// holding a live entry of it (a block hash is a first block's or
	// another's, never both: it chains the blocks before it).
	first map[uint64][]int32
}

type ttlKey struct {
	inst int
	hash uint64
}

type ttlEntry struct {
	key  ttlKey
	atNs int64
}

// NewTTLIndex returns an empty index whose entries live ttlNs. Panics if
// ttlNs ≤ 0.
func NewTTLIndex(ttlNs int64) *TTLIndex {
	if ttlNs <= 0 {
		panic("router: TTLIndex needs a positive ttl")
	}
	return &TTLIndex{ttlNs: ttlNs, last: map[ttlKey]int64{}, first: map[uint64][]int32{}}
}

// Record notes that a request with these block hashes was routed to inst
// at nowNs. Times must not go back.
func (x *TTLIndex) Record(inst int, hashes []uint64, nowNs int64) {
	x.expire(nowNs)
	if len(hashes) > 0 {
		if _, ok := x.last[ttlKey{inst, hashes[0]}]; !ok {
			x.first[hashes[0]] = append(x.first[hashes[0]], int32(inst))
		}
	}
	for _, h := range hashes {
		k := ttlKey{inst, h}
		x.last[k] = nowNs
		x.fifo = append(x.fifo, ttlEntry{k, nowNs})
	}
}

// Overlap returns how many leading blocks of hashes the index believes
// inst holds at nowNs (entries younger than the ttl).
func (x *TTLIndex) Overlap(inst int, hashes []uint64, nowNs int64) int {
	x.expire(nowNs)
	n := 0
	for _, h := range hashes {
		if _, ok := x.last[ttlKey{inst, h}]; !ok {
			break
		}
		n++
	}
	return n
}

// Holders appends to dst the instances the index believes hold the first
// of hashes (not empty) at nowNs — those whose Overlap is positive — in no
// particular order.
func (x *TTLIndex) Holders(dst []int, hashes []uint64, nowNs int64) []int {
	x.expire(nowNs)
	for _, i := range x.first[hashes[0]] {
		dst = append(dst, int(i))
	}
	return dst
}

// Len is the number of live entries (after the last call's expiry).
func (x *TTLIndex) Len() int { return len(x.last) }

// expire drops the entries last written ttl or more before nowNs.
func (x *TTLIndex) expire(nowNs int64) {
	for x.head < len(x.fifo) && nowNs-x.fifo[x.head].atNs >= x.ttlNs {
		e := x.fifo[x.head]
		if x.last[e.key] == e.atNs { // not rewritten since
			delete(x.last, e.key)
			x.forgetFirst(e.key)
		}
		x.head++
	}
	if x.head > 1024 && x.head > len(x.fifo)/2 {
		x.fifo = append(x.fifo[:0], x.fifo[x.head:]...)
		x.head = 0
	}
}

// forgetFirst drops k's instance from the holders of k's block, if that
// is a first block.
func (x *TTLIndex) forgetFirst(k ttlKey) {
	insts, ok := x.first[k.hash]
	if !ok {
		return
	}
	if j := slices.Index(insts, int32(k.inst)); j >= 0 {
		insts[j] = insts[len(insts)-1]
		insts = insts[:len(insts)-1]
	}
	if len(insts) == 0 {
		delete(x.first, k.hash)
	} else {
		x.first[k.hash] = insts
	}
}

// LRUIndex is llm-d's approximate prefix index: per instance, the block
// hashes of the requests routed there, at most a capacity of them, least
// recently routed evicted first. Each call costs O(len(hashes)); memory is
// O(capacity) per instance routed to.
type LRUIndex struct {
	sets []*lruSet // by instance index, nil until first routed to
	// first lists, by a recorded prompt's first block, the instances
	// whose LRU holds it.
	first map[uint64][]int32
}

// lruSet is one instance's LRU: a doubly linked list over slots, most
// recent at head.
type lruSet struct {
	capacity         int // fixed when the instance is first routed to, as llm-d sizes a pod's LRU once
	slot             map[uint64]int32
	hash             []uint64
	prev, next       []int32
	headIdx, tailIdx int32
}

// NewLRUIndex returns an empty index.
func NewLRUIndex() *LRUIndex { return &LRUIndex{first: map[uint64][]int32{}} }

// Record notes a request with these block hashes routed to inst, whose
// LRU holds capacity blocks (fixed the first time inst is recorded). The
// blocks are touched last to first, so a prompt's leading blocks, which
// other requests share, are the most recent and the last evicted. Panics
// if capacity < 1.
func (x *LRUIndex) Record(inst int, hashes []uint64, capacity int) {
	if capacity < 1 {
		panic("router: LRUIndex needs a positive capacity")
	}
	for len(x.sets) <= inst {
		x.sets = append(x.sets, nil)
	}
	s := x.sets[inst]
	if s == nil {
		s = &lruSet{capacity: capacity, slot: map[uint64]int32{}, headIdx: -1, tailIdx: -1}
		x.sets[inst] = s
	}
	if len(hashes) == 0 {
		return
	}
	for i := len(hashes) - 1; i >= 0; i-- {
		if h, evicted := s.touch(hashes[i]); evicted {
			x.forgetFirst(inst, h)
		}
	}
	if insts := x.first[hashes[0]]; !slices.Contains(insts, int32(inst)) {
		x.first[hashes[0]] = append(insts, int32(inst))
	}
}

// Holders appends to dst the instances whose LRU holds the first of
// hashes (not empty) — those whose Matched is positive — in no particular
// order.
func (x *LRUIndex) Holders(dst []int, hashes []uint64) []int {
	for _, i := range x.first[hashes[0]] {
		dst = append(dst, int(i))
	}
	return dst
}

// forgetFirst drops inst from the holders of h, if h is a first block.
func (x *LRUIndex) forgetFirst(inst int, h uint64) {
	insts, ok := x.first[h]
	if !ok {
		return
	}
	if k := slices.Index(insts, int32(inst)); k >= 0 {
		insts[k] = insts[len(insts)-1]
		insts = insts[:len(insts)-1]
	}
	if len(insts) == 0 {
		delete(x.first, h)
	} else {
		x.first[h] = insts
	}
}

// Matched returns how many leading blocks of hashes the index holds for
// inst.
func (x *LRUIndex) Matched(inst int, hashes []uint64) int {
	if inst >= len(x.sets) || x.sets[inst] == nil {
		return 0
	}
	s := x.sets[inst]
	n := 0
	for _, h := range hashes {
		if _, ok := s.slot[h]; !ok {
			break
		}
		n++
	}
	return n
}

// Len returns how many blocks the index holds for inst.
func (x *LRUIndex) Len(inst int) int {
	if inst >= len(x.sets) || x.sets[inst] == nil {
		return 0
	}
	return len(x.sets[inst].slot)
}

// touch makes h the most recent entry, inserting it (evicting the least
// recent when full) if absent; it returns the hash it evicted, if any.
func (s *lruSet) touch(h uint64) (evictedHash uint64, evicted bool) {
	if i, ok := s.slot[h]; ok {
		s.unlink(i)
		s.pushFront(i)
		return 0, false
	}
	var i int32
	if len(s.hash) < s.capacity {
		i = int32(len(s.hash))
		s.hash, s.prev, s.next = append(s.hash, h), append(s.prev, -1), append(s.next, -1)
	} else {
		i = s.tailIdx
		s.unlink(i)
		delete(s.slot, s.hash[i])
		evictedHash, evicted = s.hash[i], true
		s.hash[i] = h
	}
	s.slot[h] = i
	s.pushFront(i)
	return evictedHash, evicted
}

func (s *lruSet) unlink(i int32) {
	p, n := s.prev[i], s.next[i]
	if p >= 0 {
		s.next[p] = n
	} else {
		s.headIdx = n
	}
	if n >= 0 {
		s.prev[n] = p
	} else {
		s.tailIdx = p
	}
}

func (s *lruSet) pushFront(i int32) {
	s.prev[i], s.next[i] = -1, s.headIdx
	if s.headIdx >= 0 {
		s.prev[s.headIdx] = i
	}
	s.headIdx = i
	if s.tailIdx < 0 {
		s.tailIdx = i
	}
}
