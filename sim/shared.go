package sim

import "handoff/models/kv"

// sharedBlocks counts the distinct full KV blocks that the requests active
// on an instance hold in their shared prompt prefixes, for a router that
// counts shared blocks once (Dynamo's router_assume_kv_reuse). Blocks past
// a request's Prefix segments are its own and never shared, so only the
// prefixes need tracking, and a prefix is a path of segments: the active
// prefixes form a tree, and a block is held while any request holds the
// segment its last token falls in, with every segment before it. Each
// node of the tree is a key chained over the path's segments; the cost per
// request is O(segments) map operations, not O(blocks).
type sharedBlocks struct {
	refs     map[uint64]int32 // per path node: active requests through it
	distinct int              // full blocks ending in nodes with refs > 0
}

// pathKey extends a path's key by one segment.
func pathKey(parent uint64, seg kv.Segment) uint64 {
	x := parent ^ (seg.ID + 0x9e3779b97f4a7c15) ^ uint64(seg.Tokens)<<40
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// add records a request with prefix segs and returns how many of its full
// blocks the prefix covers; the distinct count grows by the blocks of the
// segments no active request held yet.
func (s *sharedBlocks) add(segs []kv.Segment, blockSize int) int {
	key, tokens := uint64(0), 0
	for _, seg := range segs {
		key = pathKey(key, seg)
		before := tokens / blockSize
		tokens += seg.Tokens
		if s.refs[key]++; s.refs[key] == 1 {
			s.distinct += tokens/blockSize - before
		}
	}
	return tokens / blockSize
}

// remove forgets a request added with prefix segs.
func (s *sharedBlocks) remove(segs []kv.Segment, blockSize int) {
	key, tokens := uint64(0), 0
	for _, seg := range segs {
		key = pathKey(key, seg)
		before := tokens / blockSize
		tokens += seg.Tokens
		if s.refs[key]--; s.refs[key] == 0 {
			delete(s.refs, key)
			s.distinct -= tokens/blockSize - before
		}
	}
}

// first is how many active requests go through the first segment of
// segs: 0 when segs is empty.
func (s *sharedBlocks) first(segs []kv.Segment) int32 {
	if len(segs) == 0 {
		return 0
	}
	return s.refs[pathKey(0, segs[0])]
}

// held is how many leading full blocks of a prompt with prefix segs the
// active requests hold.
func (s *sharedBlocks) held(segs []kv.Segment, blockSize int) int {
	key, tokens := uint64(0), 0
	for _, seg := range segs {
		if key = pathKey(key, seg); s.refs[key] == 0 {
			break
		}
		tokens += seg.Tokens
	}
	return tokens / blockSize
}
