package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"handoff/models/engine"
	"handoff/results"
)

// Waits-for chains between locked-up instances.
//
// A pinned prefiller waits for the decoders whose requests hold its KV
// unpulled, and the spell names the one holding the most (by prompt
// tokens): the instance it waits for. That decoder may be locked up too —
// then the chain goes on to what it waits for, if another instance — or
// not: then what stops its own admission (its KV blocks, its running
// set, its token budget, or its step in flight) closes the chain. A chain
// that comes back to an instance already on it is a cycle.
//
// In this model only a pinned prefiller waits for another instance: a
// decoder's admission waits for blocks of its own pool, held by its own
// running, ready and pulling requests, and a pull waits for the network,
// the store or a prefill step already running — each ends by itself,
// whatever any instance schedules. So a chain is at most a prefiller and
// a decoder, and no cycle can close; the detection does not assume it.

// heldKV is what a prefiller holds for decoders that have not pulled it:
// how many requests' KV, and their prompt tokens by decoder. It is kept
// as flights enter and leave the phases that hold it (phase.holdsKV:
// relaying to the decoder, holding there; noteHold), so that a pinned
// spell names its decoder without a scan of the flights.
type heldKV struct {
	n      int
	tokens map[int32]int64
}

// noteHold counts flight f's KV on its prefiller as held for its decoder
// (in) or no longer (out), as f enters or leaves the phases that hold it
// (phase.holdsKV). KV handed off through the store waits for the store,
// not for a decoder, and is not counted.
func (c *cluster) noteHold(f *flight, in bool) {
	rp := &c.replicas[f.route.Prefill]
	if rp.cfg.KVViaStore {
		return
	}
	h, d, t := &rp.held, int32(f.route.Decode), int64(f.req.PromptTokens)
	if h.tokens == nil {
		h.tokens = map[int32]int64{}
	}
	if !in {
		h.n--
		if h.tokens[d] -= t; h.tokens[d] == 0 {
			delete(h.tokens, d)
		}
		return
	}
	h.n++
	h.tokens[d] += t
}

// heaviest is the decoder the most held KV is for (the lowest index on
// ties), or −1. Cost: O(decoders it holds KV for).
func (h *heldKV) heaviest() int32 {
	best, most := int32(-1), int64(0)
	for d, t := range h.tokens {
		if t > most || t == most && d < best {
			best, most = d, t
		}
	}
	return best
}

// lockChains are a run's waits-for chains, one entry per distinct chain,
// and scratch for finding one without allocating.
type lockChains struct {
	index   map[string]int
	list    []results.LockupChain
	longest [][]chainHop // per chain, its longest spell's hops, for its Example (examples)
	seenNs  []int64      // per chain, when it was first seen
	hops    []chainHop
	key     []byte
}

// chainHop is one instance on a chain: its kind of lock-up and since when,
// or (kind NoLock) what stopped its own admission, or "cycle".
type chainHop struct {
	inst   int
	kind   LockKind
	fromNs int64
	stop   string
}

// noteChain adds the chain that spell s of instance i formed: from i to
// the instance it waited for, on through each one locked up during s to
// the one it waited for, until one that was not (what stops its
// admission closes the chain) or one already on it (a cycle). Cost:
// O(instances on the chain), allocating only for a chain not seen before
// (and at most once more for its longest spell).
func (c *cluster) noteChain(i int, s lockSpell) {
	cs := &c.chains
	hops := append(cs.hops[:0], chainHop{inst: i, kind: s.kind, fromNs: s.fromNs})
	for w := s; w.waitsFor >= 0; {
		j := int(w.waitsFor)
		if slices.ContainsFunc(hops, func(h chainHop) bool { return h.inst == j }) {
			hops = append(hops, chainHop{inst: j, stop: "cycle"})
			break
		}
		l := c.lockDuring(j, s.fromNs)
		if l.kind == NoLock {
			hops = append(hops, chainHop{inst: j, stop: c.admissionStop(j, w.waitSnap)})
			break
		}
		hops = append(hops, chainHop{inst: j, kind: l.kind, fromNs: l.fromNs})
		w = l
	}
	cs.hops, cs.key = hops, c.appendChain(cs.key[:0], hops, false)
	k, ok := cs.index[string(cs.key)]
	if !ok {
		k = cs.newChain(c.chainNames(hops), hops[len(hops)-1].stop == "cycle", s.fromNs)
		cs.seenNs = append(cs.seenNs, c.nowNs)
	}
	ch := &cs.list[k]
	d := s.toNs - s.fromNs
	ch.Spells++
	ch.Ns += d
	if d > ch.LongestNs {
		ch.LongestNs, ch.LongestFromNs = d, s.fromNs
		cs.longest[k] = append(cs.longest[k][:0], hops...)
	}
}

// chainResults returns the run's chains, each with the text of its
// longest spell's chain as it was.
func (c *cluster) chainResults() ([]results.LockupChain, []int64) {
	cs := &c.chains
	for k := range cs.list {
		cs.list[k].Example = string(c.appendChain(nil, cs.longest[k], true))
	}
	sortChains(cs.list, cs.seenNs)
	return cs.list, cs.seenNs
}

// sortChains puts chains in the order first seen, those first seen at
// the same instant in the order of their text — an order that does not
// depend on which of two instances' events at one instant went first, so
// that a split run (split.go) lists its shards' chains as one run does.
// seenNs is each chain's first sighting, sorted with it.
func sortChains(list []results.LockupChain, seenNs []int64) {
	idx := make([]int, len(list))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(seenNs[a], seenNs[b]); c != 0 {
			return c
		}
		return strings.Compare(list[a].Chain, list[b].Chain)
	})
	sorted, seen := make([]results.LockupChain, len(list)), make([]int64, len(list))
	for k, i := range idx {
		sorted[k], seen[k] = list[i], seenNs[i]
	}
	copy(list, sorted)
	copy(seenNs, seen)
}

// appendChain appends the text of a chain to b: each instance with its
// kind (and, with since, when it began), the last one's admission stop
// or cycle in brackets.
func (c *cluster) appendChain(b []byte, hops []chainHop, since bool) []byte {
	for k, h := range hops {
		if k > 0 {
			b = append(b, " → "...)
		}
		b = append(b, c.cfg.Instances[h.inst].Name...)
		switch {
		case h.kind == NoLock:
			b = append(append(append(b, " ("...), h.stop...), ')')
		case since:
			b = fmt.Appendf(b, " %s since %.3f s", h.kind, float64(h.fromNs)/1e9)
		default:
			b = append(append(b, ' '), h.kind.String()...)
		}
	}
	return b
}

// chainNames are the names of a chain's instances, each once.
func (c *cluster) chainNames(hops []chainHop) []string {
	var names []string
	for _, h := range hops {
		if h.stop != "cycle" {
			names = append(names, c.cfg.Instances[h.inst].Name)
		}
	}
	return names
}

// newChain adds the chain of the key in scratch, first seen in a spell
// from fromNs, and returns its index.
func (cs *lockChains) newChain(names []string, cycle bool, fromNs int64) int {
	if cs.index == nil {
		cs.index = map[string]int{}
	}
	key := string(cs.key)
	cs.index[key] = len(cs.list)
	cs.list = append(cs.list, results.LockupChain{Chain: key, Instances: names, Cycle: cycle, FirstNs: fromNs})
	cs.longest = append(cs.longest, nil)
	return len(cs.list) - 1
}

// lockDuring is instance j's lock-up during a spell of another instance
// that began at fromNs and ends now: its stuck spell or preemption loop
// under way, once longer than the threshold, or its last spell counted if
// that ended after fromNs; kind NoLock if none.
func (c *cluster) lockDuring(j int, fromNs int64) lockSpell {
	l := &c.replicas[j].metrics.lock
	if l.open.kind != NoLock && c.nowNs-l.open.fromNs > c.cfg.LockupThresholdNs {
		return l.open
	}
	if s, ok := c.loopSpell(j); ok {
		return s
	}
	if l.last.kind != NoLock && l.last.toNs > fromNs {
		return l.last
	}
	return lockSpell{waitsFor: -1}
}

// waitFor makes spell s wait for instance j, whose wait totals it notes
// now, to tell later what stopped j's admission meanwhile.
func (c *cluster) waitFor(s *lockSpell, j int32) {
	s.waitsFor = j
	if j >= 0 {
		s.waitSnap = c.engine(int(j)).WaitTotals()
	}
}

// admissionStop says what stopped instance j admitting the requests queued
// there since its wait totals were snap: the cause it spent the most time
// in — its own KV blocks, running set or token budget — or, if none, its
// steps in flight (each pass admitted all).
func (c *cluster) admissionStop(j int, snap engine.Waits) string {
	now := c.engine(j).WaitTotals()
	most, cause := int64(0), engine.WaitBusy
	for w := engine.WaitMaxSeqs; w < engine.NumWaitCauses; w++ {
		if d := now[w] - snap[w]; d > most {
			most, cause = d, w
		}
	}
	return admissionStops[cause]
}

// admissionStops name what stops a decoder's admission, by wait cause.
var admissionStops = func() (names [engine.NumWaitCauses]string) {
	for w, name := range engine.WaitNames {
		names[w] = "own " + name
	}
	names[engine.WaitBusy] = "own steps in flight"
	return names
}()
