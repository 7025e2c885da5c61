package kv

// Mixing constants: the 64-bit golden ratio and splitmix64's multipliers.
const (
	golden    = 0x9e3779b97f4a7c15
	mixMulA   = 0xbf58476d1ce4e5b9
	mixMulB   = 0x94d049bb133111eb
	rootSeed  = 0x4b565f68616e646f // "KV_hando": parent of block 0
	kindSeg   = 0                  // run of a prompt Segment
	kindOwn   = 1                  // run of tokens unique to one sequence
	noneHash  = 0                  // never produced: callers may use 0 as "no hash"
	zeroAlias = golden             // what a 0 result is replaced by
)

// mix64 is splitmix64's finaliser: a bijection of uint64 with full avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * mixMulA
	z = (z ^ (z >> 27)) * mixMulB
	return z ^ (z >> 31)
}

// fold chains one word into h. For a fixed h it is a bijection of x, and it is
// order-sensitive across successive words.
func fold(h, x uint64) uint64 { return mix64((h + golden) ^ x) }

// foldRun chains a run of length tokens of one identity (id, kind) starting at
// offset start within it.
func foldRun(h, id uint64, start, length int, kind uint64) uint64 {
	h = fold(h, id)
	h = fold(h, uint64(start))
	return fold(h, uint64(length)<<1|kind)
}

// AppendBlockHashes appends to dst the chained hash of each full block among
// the first n tokens of a sequence and returns the extended slice.
//
// Token identities: the prompt is segs, in order; token k of segment s is
// (s.ID, k). Tokens past the last segment (the rest of the prompt and every
// generated token) are unique to the sequence: token at position p is
// (uniqueID, p), in a namespace distinct from segment IDs. Hashing starts at
// block len(dst), chaining dst[len(dst)-1], so a caller can extend a hash list
// as the sequence grows; the result equals computing all blocks at once.
// Hash i is equal for two sequences iff their first (i+1)·blockSize tokens
// have the same identities (up to 64-bit collisions), and is never 0.
//
// A block's hash folds the maximal runs (identity, start offset, length) it
// covers, so the cost is O(segments before the first new block + runs in the
// new blocks); nothing is allocated beyond dst's growth. The partial last
// block (n not a multiple of blockSize) is not hashed. Panics if blockSize ≤ 0,
// n < 0, or a segment has negative Tokens.
func AppendBlockHashes(dst []uint64, segs []Segment, uniqueID uint64, n, blockSize int) []uint64 {
	if blockSize <= 0 || n < 0 {
		panic("kv: AppendBlockHashes needs blockSize > 0 and n ≥ 0")
	}
	first, full := len(dst), n/blockSize
	if first >= full {
		return dst
	}
	parent := mix64(rootSeed ^ uint64(blockSize))
	if first > 0 {
		parent = dst[first-1]
	}
	c := segCursor{segs: segs, pos: first * blockSize}
	c.skip()
	for b := first; b < full; b++ {
		parent = c.hashBlock(parent, uniqueID, blockSize)
		dst = append(dst, parent)
	}
	return dst
}

// segCursor walks a sequence's token positions, tracking which segment holds
// position pos.
type segCursor struct {
	segs  []Segment
	seg   int // index of the segment holding pos, or len(segs) past them
	start int // position of segs[seg]'s first token
	pos   int
}

// skip advances seg past every segment that ends at or before pos.
func (c *segCursor) skip() {
	for c.seg < len(c.segs) {
		t := c.segs[c.seg].Tokens
		if t < 0 {
			panic("kv: segment with negative Tokens")
		}
		if c.start+t > c.pos {
			return
		}
		c.start += t
		c.seg++
	}
}

// hashBlock folds the runs of the blockSize tokens from pos into parent and
// returns the block's hash, leaving pos at the next block.
func (c *segCursor) hashBlock(parent, uniqueID uint64, blockSize int) uint64 {
	h, end := parent, c.pos+blockSize
	for c.pos < end {
		if c.seg == len(c.segs) {
			h = foldRun(h, uniqueID, c.pos, end-c.pos, kindOwn)
			c.pos = end
			break
		}
		s := c.segs[c.seg]
		run := min(end, c.start+s.Tokens) - c.pos
		h = foldRun(h, s.ID, c.pos-c.start, run, kindSeg)
		c.pos += run
		c.skip()
	}
	h = mix64(h)
	if h == noneHash {
		h = zeroAlias
	}
	return h
}

// GroupKey is the key under which a lower tier keeps the block of hash h
// of a hybrid model's KV cache group group: h itself for group 0 (the
// full-attention group, so a model with one group keys its blocks by
// their hashes), and a hash of (h, group) for the others, as vLLM's
// offloading connector keys a block by (block hash, group index)
// (make_offload_key). Never 0. It panics if group is negative.
func GroupKey(h uint64, group int) uint64 {
	if group < 0 {
		panic("kv: negative KV cache group")
	}
	if group == 0 {
		return h
	}
	if k := fold(h, uint64(group)); k != noneHash {
		return k
	}
	return zeroAlias
}
