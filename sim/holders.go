package sim

import (
	"slices"

	"handoff/models/kv"
	"handoff/models/router"
)

// holders is which instances a prompt's prefix may count on, for a
// router that would otherwise ask every instance (router.Cluster.Caching
// and Sharing): by first block hash, the instances whose prefix caches
// hold it, as their pools report it (kv.Pool.WatchFirstBlocks); by first
// prefix segment, the instances with an active request through it (their
// sharedBlocks). Both cost O(1) per first block cached or evicted and per
// request booked, and memory per first block cached.
type holders struct {
	caching map[uint64][]int32 // first block hash → instances whose prefix cache holds it
	sharing map[uint64][]int32 // first prefix segment's path key → instances with an active request through it
}

// initHolders starts the indexes the router can use: the caching one for
// a router that reads block hashes, the sharing one when the bookkeeping
// counts shared blocks once.
func (c *cluster) initHolders() {
	h, v := &c.holders, &c.routing.view
	if c.routing.hashesUsed {
		h.caching = map[uint64][]int32{}
		for i := range c.replicas {
			c.watchFirstBlocks(i)
		}
		v.Caching = c.cachingInstances
	}
	if c.cfg.RouterCountsSharedBlocks {
		h.sharing = map[uint64][]int32{}
		v.Sharing = c.sharingInstances
	}
}

// watchFirstBlocks has instance i's pool report the first blocks it
// caches and evicts.
func (c *cluster) watchFirstBlocks(i int) {
	c.replicas[i].eng.Pool().WatchFirstBlocks(func(h uint64, cached bool) {
		c.holders.caching[h] = addOrDrop(c.holders.caching[h], i, cached)
		if len(c.holders.caching[h]) == 0 {
			delete(c.holders.caching, h)
		}
	})
}

// restartCold replaces instance i's engine with a cold one (a crash, or a
// drained instance turned off): its prefix cache is gone.
func (c *cluster) restartCold(i int) {
	rp := &c.replicas[i]
	rp.eng = rp.eng.Fresh()
	if c.holders.caching == nil {
		return
	}
	for h, insts := range c.holders.caching { // rare: a pass over the cached first blocks
		if insts = addOrDrop(insts, i, false); len(insts) == 0 {
			delete(c.holders.caching, h)
		} else {
			c.holders.caching[h] = insts
		}
	}
	c.watchFirstBlocks(i)
}

// noteSharing tells the sharing index that instance i's active requests
// began (live) or ceased to go through the first segment of prefix.
func (c *cluster) noteSharing(i int, prefix []kv.Segment, live bool) {
	key := pathKey(0, prefix[0])
	c.holders.sharing[key] = addOrDrop(c.holders.sharing[key], i, live)
	if len(c.holders.sharing[key]) == 0 {
		delete(c.holders.sharing, key)
	}
}

// cachingInstances is router.Cluster.Caching.
func (c *cluster) cachingInstances(dst []int, hashes []uint64) []int {
	for _, i := range c.holders.caching[hashes[0]] {
		dst = append(dst, int(i))
	}
	return dst
}

// sharingInstances is router.Cluster.Sharing.
func (c *cluster) sharingInstances(dst []int, r *router.Request) []int {
	if len(r.Prefix) == 0 {
		return dst
	}
	for _, i := range c.holders.sharing[pathKey(0, r.Prefix[0])] {
		dst = append(dst, int(i))
	}
	return dst
}

// addOrDrop adds instance i to insts (add) or takes it out, if there.
func addOrDrop(insts []int32, i int, add bool) []int32 {
	k := slices.Index(insts, int32(i))
	switch {
	case add && k < 0:
		return append(insts, int32(i))
	case !add && k >= 0:
		insts[k] = insts[len(insts)-1]
		return insts[:len(insts)-1]
	}
	return insts
}
