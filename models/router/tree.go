package router

import "math"

// The routers' indexes over their views (Indexer): a leg's positions
// ordered by a key each router derives from a view, so that a choice
// reads the least keys instead of every view.

// minTree is a tournament tree over a leg's positions: the least key, the
// lowest position among equal ones, in O(1), and a key set in O(log n).
type minTree struct {
	keys []float64 // by position
	leaf int       // the leaves' offset in win: a power of two ≥ len(keys)
	win  []int32   // win[node]: the position of the least key under node, −1 under none
}

// reset makes the tree hold n positions, position k keyed key(k).
func (t *minTree) reset(n int, key func(k int) float64) {
	t.leaf = 1
	for t.leaf < n {
		t.leaf *= 2
	}
	t.keys = t.keys[:0]
	for k := range n {
		t.keys = append(t.keys, key(k))
	}
	t.win = t.win[:0]
	for range 2 * t.leaf {
		t.win = append(t.win, -1)
	}
	for k := range n {
		t.win[t.leaf+k] = int32(k)
	}
	for node := t.leaf - 1; node >= 1; node-- {
		t.win[node] = t.better(t.win[2*node], t.win[2*node+1])
	}
}

// set keys position k with key.
func (t *minTree) set(k int, key float64) {
	if t.keys[k] == key {
		return
	}
	t.keys[k] = key
	for node := (t.leaf + k) / 2; node >= 1; node /= 2 {
		t.win[node] = t.better(t.win[2*node], t.win[2*node+1])
	}
}

// min returns the position of the least key (the lowest position among
// equal ones) and the key; −1 and +Inf when the tree is empty.
func (t *minTree) min() (int, float64) {
	if len(t.keys) == 0 {
		return -1, math.Inf(1)
	}
	k := t.win[1]
	return int(k), t.keys[k]
}

// better returns whichever of positions a and b (−1: none) has the lesser
// key, a on equal keys: a is the lower position.
func (t *minTree) better(a, b int32) int32 {
	if b < 0 || a >= 0 && t.keys[a] <= t.keys[b] {
		return a
	}
	return b
}

// rankKey orders a leg's positions in a rankTree: lexicographically, then
// by position.
type rankKey [4]float64

// compare returns −1, 0 or +1 as a orders before, with or after b.
func (a *rankKey) compare(b *rankKey) int {
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// rankTree is an ordered set of a leg's positions by (key, position), with
// ranks: the k-th position in order and how many order before a key,
// each in O(log n) expected, as are inserting and removing a position. It
// is a treap whose nodes are the positions themselves, with priorities
// hashed from them: it allocates nothing once grown, and its shape is a
// function of its contents.
type rankTree struct {
	keys        []rankKey // by position
	left, right []int32   // children, −1 for none
	size        []int32   // nodes in the subtree
	in          []bool    // the position is in the set
	root        int32
}

// reset makes the tree hold positions 0 to n−1, position k keyed key(k).
func (t *rankTree) reset(n int, key func(k int) rankKey) {
	t.keys, t.left, t.right, t.size, t.in = t.keys[:0], t.left[:0], t.right[:0], t.size[:0], t.in[:0]
	for k := range n {
		t.keys = append(t.keys, key(k))
		t.left, t.right, t.size, t.in = append(t.left, -1), append(t.right, -1), append(t.size, 1), append(t.in, false)
	}
	t.root = -1
	for k := range n {
		t.insert(k)
	}
}

// set keys position k with key, in the set or out of it.
func (t *rankTree) set(k int, key rankKey) {
	if t.keys[k] == key {
		return
	}
	in := t.in[k]
	if in {
		t.remove(k)
	}
	t.keys[k] = key
	if in {
		t.insert(k)
	}
}

// insert adds position k (not in the set).
func (t *rankTree) insert(k int) {
	l, r := t.split(t.root, &t.keys[k], k)
	t.left[k], t.right[k], t.size[k], t.in[k] = -1, -1, 1, true
	t.root = t.merge(t.merge(l, int32(k)), r)
}

// remove takes position k (in the set) out.
func (t *rankTree) remove(k int) {
	l, r := t.split(t.root, &t.keys[k], k)
	_, r = t.split(r, &t.keys[k], k+1)
	t.root = t.merge(l, r)
	t.in[k] = false
}

// len is the number of positions in the set.
func (t *rankTree) len() int { return int(t.sizeOf(t.root)) }

// kth returns the position of rank j (0: the first in order).
func (t *rankTree) kth(j int) int {
	n := t.root
	for {
		switch ls := int(t.sizeOf(t.left[n])); {
		case j < ls:
			n = t.left[n]
		case j == ls:
			return int(n)
		default:
			j -= ls + 1
			n = t.right[n]
		}
	}
}

// appendRange appends to dst the positions of ranks [from, to), in order.
func (t *rankTree) appendRange(dst []int, from, to int) []int {
	return t.appendRanks(dst, t.root, from, to)
}

// appendRanks appends the positions of the subtree at n whose ranks within
// it are in [from, to).
func (t *rankTree) appendRanks(dst []int, n int32, from, to int) []int {
	if n < 0 || from >= to || to <= 0 || from >= int(t.size[n]) {
		return dst
	}
	ls := int(t.sizeOf(t.left[n]))
	dst = t.appendRanks(dst, t.left[n], from, to)
	if from <= ls && ls < to {
		dst = append(dst, int(n))
	}
	return t.appendRanks(dst, t.right[n], from-ls-1, to-ls-1)
}

// before counts the positions ordered before (key, pos).
func (t *rankTree) before(key *rankKey, pos int) int {
	count := 0
	for n := t.root; n >= 0; {
		if t.orders(n, key, pos) {
			count += int(t.sizeOf(t.left[n])) + 1
			n = t.right[n]
		} else {
			n = t.left[n]
		}
	}
	return count
}

// orders reports whether node n orders before (key, pos).
func (t *rankTree) orders(n int32, key *rankKey, pos int) bool {
	c := t.keys[n].compare(key)
	return c < 0 || c == 0 && int(n) < pos
}

// split parts the subtree at n into the nodes ordered before (key, pos)
// and the rest.
func (t *rankTree) split(n int32, key *rankKey, pos int) (l, r int32) {
	if n < 0 {
		return -1, -1
	}
	if t.orders(n, key, pos) {
		t.right[n], r = t.split(t.right[n], key, pos)
		t.resize(n)
		return n, r
	}
	l, t.left[n] = t.split(t.left[n], key, pos)
	t.resize(n)
	return l, n
}

// merge joins subtrees a and b, every node of a ordered before b's.
func (t *rankTree) merge(a, b int32) int32 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case priority(a) > priority(b):
		t.right[a] = t.merge(t.right[a], b)
		t.resize(a)
		return a
	default:
		t.left[b] = t.merge(a, t.left[b])
		t.resize(b)
		return b
	}
}

func (t *rankTree) sizeOf(n int32) int32 {
	if n < 0 {
		return 0
	}
	return t.size[n]
}

func (t *rankTree) resize(n int32) { t.size[n] = 1 + t.sizeOf(t.left[n]) + t.sizeOf(t.right[n]) }

// priority is a node's treap priority: its position, mixed.
func priority(n int32) uint64 {
	x := uint64(n) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
