package router

import (
	"container/heap"
	"slices"
)

// SGLang's approximate tree (sgl-model-gateway/src/policies/tree.rs,
// Tree): one radix tree of the prompts the router sent, shared by the
// workers of a model, each node listing the workers ("tenants") it was
// sent to with when they last used it. Upstream its edges are characters
// of the request's text; here they are tokens, a token named by its
// segment and offset (kv.Segment) or by the request it belongs to, so
// two prompts share a path exactly as long as they share tokens. Sizes
// are counted in tokens and compared with max_tree_size (characters) at
// charsPerToken characters a token.

// charsPerToken converts max_tree_size's characters into tokens, at the
// four characters a token llm-d's approximate scorers also assume.
const charsPerToken = 4

// sgRun is a run of prompt tokens: tokens [off, off+n) of segment id, or
// of request id's own text (own).
type sgRun struct {
	id  uint64
	own bool
	off int
	n   int
}

// sgKey names one token: where a run starts.
type sgKey struct {
	id  uint64
	own bool
	off int
}

func (r sgRun) key() sgKey { return sgKey{r.id, r.own, r.off} }

// appendPrompt appends r's prompt as runs: its prefix segments, cut at
// its prompt length, then its own tokens.
func appendPrompt(dst []sgRun, r *Request) []sgRun {
	left := r.PromptTokens
	for _, s := range r.Prefix {
		n := min(s.Tokens, left)
		if n > 0 {
			dst = append(dst, sgRun{id: s.ID, n: n})
		}
		left -= n
	}
	if left > 0 {
		dst = append(dst, sgRun{id: uint64(r.ID), own: true, n: left})
	}
	return dst
}

// textLen is the tokens in t.
func textLen(t []sgRun) int {
	n := 0
	for _, r := range t {
		n += r.n
	}
	return n
}

// sharedPrefix is how many leading tokens a and b share.
func sharedPrefix(a, b []sgRun) int {
	n := 0
	var ao, bo int // tokens of a[0] and b[0] already matched
	for len(a) > 0 && len(b) > 0 {
		ra, rb := a[0], b[0]
		if ra.id != rb.id || ra.own != rb.own || ra.off+ao != rb.off+bo {
			return n
		}
		m := min(ra.n-ao, rb.n-bo)
		n, ao, bo = n+m, ao+m, bo+m
		if ao == ra.n {
			a, ao = a[1:], 0
		}
		if bo == rb.n {
			b, bo = b[1:], 0
		}
	}
	return n
}

// splitText returns t's first k tokens and the rest, as new slices.
func splitText(t []sgRun, k int) (head, tail []sgRun) {
	for _, r := range t {
		switch {
		case k >= r.n:
			head = append(head, r)
		case k > 0:
			head = append(head, sgRun{r.id, r.own, r.off, k})
			tail = append(tail, sgRun{r.id, r.own, r.off + k, r.n - k})
		default:
			tail = append(tail, r)
		}
		k -= min(k, r.n)
	}
	return head, tail
}

// advanceText drops t's first k tokens; it may change t's first run in
// place (t is the caller's scratch).
func advanceText(t []sgRun, k int) []sgRun {
	for len(t) > 0 && k >= t[0].n {
		k -= t[0].n
		t = t[1:]
	}
	if k > 0 {
		t[0].off += k
		t[0].n -= k
	}
	return t
}

// sgTenant is a worker holding a node, and when it last used it.
type sgTenant struct {
	inst  int
	epoch uint64
}

// sgNode is one node of the tree: a run of tokens past its parent's.
type sgNode struct {
	text     []sgRun
	n        int // tokens in text
	parent   *sgNode
	children map[sgKey]*sgNode // nil until it has one
	tenants  []sgTenant        // by instance index
	last     int               // the tenant a match reports (tree.rs's last_tenant cache), −1 for none
	id       uint64            // creation order: ties in eviction
}

func (nd *sgNode) find(inst int) (int, bool) {
	return slices.BinarySearchFunc(nd.tenants, inst, func(t sgTenant, i int) int { return t.inst - i })
}

func (nd *sgNode) has(inst int) bool { _, ok := nd.find(inst); return ok }

// set records that inst used the node at epoch, adding it if new.
func (nd *sgNode) set(inst int, epoch uint64) {
	k, ok := nd.find(inst)
	if ok {
		nd.tenants[k].epoch = epoch
		return
	}
	nd.tenants = slices.Insert(nd.tenants, k, sgTenant{inst, epoch})
}

func (nd *sgNode) remove(inst int) {
	if k, ok := nd.find(inst); ok {
		nd.tenants = slices.Delete(nd.tenants, k, k+1)
	}
}

// leafOf reports whether inst holds the node and none of its children.
func (nd *sgNode) leafOf(inst int) bool {
	if !nd.has(inst) {
		return false
	}
	for _, ch := range nd.children {
		if ch.has(inst) {
			return false
		}
	}
	return true
}

// tenant is the worker a match ending here reports: the cached one while
// it still holds the node, else the lowest-indexed holder (upstream: the
// first its map yields), cached; −1 when none does.
func (nd *sgNode) tenant() int {
	if nd.last >= 0 && nd.has(nd.last) {
		return nd.last
	}
	nd.last = -1
	if len(nd.tenants) > 0 {
		nd.last = nd.tenants[0].inst
	}
	return nd.last
}

// sgTree is the approximate tree of one leg's workers.
type sgTree struct {
	root  *sgNode
	size  map[int]int // tokens per tenant (tree.rs's tenant_char_count)
	epoch uint64      // tree.rs's EPOCH_COUNTER: LRU order
	nodes uint64
}

func newSGTree() *sgTree {
	t := &sgTree{size: map[int]int{}}
	t.root = t.node(nil, nil)
	return t
}

func (t *sgTree) node(text []sgRun, parent *sgNode) *sgNode {
	t.nodes++
	return &sgNode{text: text, n: textLen(text), parent: parent, last: -1, id: t.nodes}
}

// setChild hangs child under nd at key k; a leaf's map is made when it
// first gets a child, most nodes being leaves.
func (nd *sgNode) setChild(k sgKey, child *sgNode) {
	if nd.children == nil {
		nd.children = map[sgKey]*sgNode{}
	}
	nd.children[k] = child
}

func (t *sgTree) next() uint64 { e := t.epoch; t.epoch++; return e }

// addTenant makes inst a tenant of the root, as a worker's registration
// does (insert of the empty text).
func (t *sgTree) addTenant(inst int) {
	if !t.root.has(inst) {
		t.root.set(inst, 0)
	}
	if _, ok := t.size[inst]; !ok {
		t.size[inst] = 0
	}
}

// insert records text as sent to inst (Tree::insert): inst joins every
// node along the text's path, the path split where the text leaves it,
// and the node where the text ends is stamped as just used. text is
// the caller's scratch, consumed.
func (t *sgTree) insert(text []sgRun, inst int) {
	t.addTenant(inst)
	prev := t.root
	for len(text) > 0 {
		k := text[0].key()
		child := prev.children[k]
		if child == nil {
			leaf := t.node(slices.Clone(text), prev)
			leaf.last = inst
			leaf.set(inst, t.next())
			t.size[inst] += leaf.n
			prev.setChild(k, leaf)
			return
		}
		s := sharedPrefix(text, child.text)
		if s < child.n {
			child = t.split(prev, child, s)
		}
		if !child.has(inst) {
			t.size[inst] += child.n
			child.set(inst, 0)
		}
		prev, text = child, advanceText(text, s)
	}
	prev.set(inst, t.next())
}

// split cuts child (under prev) after its first s tokens and returns the
// new node holding them, with child's tenants and their times.
func (t *sgTree) split(prev, child *sgNode, s int) *sgNode {
	head, tail := splitText(child.text, s)
	mid := t.node(head, prev)
	mid.tenants, mid.last = slices.Clone(child.tenants), child.last
	mid.setChild(tail[0].key(), child)
	prev.setChild(head[0].key(), mid)
	child.text, child.n, child.parent = tail, child.n-s, mid
	return mid
}

// match walks text down the tree (Tree::prefix_match_with_counts): the
// tokens matched, a partial node's included, and the tenant of the node
// where the walk stopped (−1: none). One match in eight stamps that
// tenant's use of the node, as upstream's sampled update does. text is
// the caller's scratch, consumed.
func (t *sgTree) match(text []sgRun) (matched, inst int) {
	prev := t.root
	for len(text) > 0 {
		child := prev.children[text[0].key()]
		if child == nil {
			break
		}
		s := sharedPrefix(text, child.text)
		matched, prev = matched+s, child
		if s < child.n {
			break
		}
		text = advanceText(text, s)
	}
	inst = prev.tenant()
	if e := t.next(); e&7 == 0 && inst >= 0 {
		prev.set(inst, e)
	}
	return matched, inst
}

// removeTenant drops inst from every node (Tree::remove_tenant), pruning
// the nodes left with no tenant and no child.
func (t *sgTree) removeTenant(inst int) {
	t.walk(t.root, func(nd *sgNode) { nd.remove(inst) })
	t.prune(t.root)
	delete(t.size, inst)
}

func (t *sgTree) walk(nd *sgNode, f func(*sgNode)) {
	f(nd)
	for _, ch := range nd.children {
		t.walk(ch, f)
	}
}

func (t *sgTree) prune(nd *sgNode) {
	for k, ch := range nd.children {
		t.prune(ch)
		if len(ch.children) == 0 && len(ch.tenants) == 0 {
			delete(nd.children, k)
		}
	}
}

// evict brings every tenant's size down to maxTokens
// (Tree::evict_tenant_by_size): its leaves leave it least recently used
// first, a node with no tenant and no child is dropped, and a parent the
// tenant then holds as a leaf joins the queue.
func (t *sgTree) evict(maxTokens int) {
	var q sgEvictions
	t.walk(t.root, func(nd *sgNode) {
		for _, tn := range nd.tenants {
			if nd.leafOf(tn.inst) {
				q = append(q, sgEviction{tn.epoch, tn.inst, nd})
			}
		}
	})
	heap.Init(&q)
	for q.Len() > 0 {
		e := heap.Pop(&q).(sgEviction)
		if t.size[e.inst] <= maxTokens || !e.node.leafOf(e.inst) {
			continue
		}
		t.size[e.inst] -= e.node.n
		e.node.remove(e.inst)
		p := e.node.parent
		if p == nil {
			continue
		}
		if len(e.node.children) == 0 && len(e.node.tenants) == 0 {
			delete(p.children, e.node.text[0].key())
		}
		if p.leafOf(e.inst) {
			k, _ := p.find(e.inst)
			heap.Push(&q, sgEviction{p.tenants[k].epoch, e.inst, p})
		}
	}
}

// sgEviction is a leaf of a tenant's, queued for eviction.
type sgEviction struct {
	epoch uint64
	inst  int
	node  *sgNode
}

// sgEvictions is a min-heap by last use; upstream's heap leaves ties in
// no order, here they go by tenant, then by the node's age.
type sgEvictions []sgEviction

func (q sgEvictions) Len() int { return len(q) }
func (q sgEvictions) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.epoch != b.epoch {
		return a.epoch < b.epoch
	}
	if a.inst != b.inst {
		return a.inst < b.inst
	}
	return a.node.id < b.node.id
}
func (q sgEvictions) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *sgEvictions) Push(x any)   { *q = append(*q, x.(sgEviction)) }
func (q *sgEvictions) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
