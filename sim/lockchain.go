package sim

import (
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
// as flights enter and leave phaseHolding (noteHold), so that a pinned
// spell names its decoder without a scan of the flights.
type heldKV struct {
	n      int
	tokens map[int32]int64
}

// noteHold counts flight f's KV on its prefiller as held for its decoder
// (in) or no longer (out), as f enters or leaves phaseHolding. KV handed
// off through the store waits for the store, not for a decoder, and is
// not counted.
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

// lockChains are a run's waits-for chains, one entry per distinct chain.
type lockChains struct {
	index map[string]int
	list  []results.LockupChain
}

// noteChain adds the chain that spell s of instance i formed: from i to
// the instance it waited for, on through each one locked up during s to
// the one it waited for, until one that was not (what stops its
// admission closes the chain) or one already on it (a cycle).
func (c *cluster) noteChain(i int, s lockSpell) {
	var key, example strings.Builder
	name := c.cfg.Instances[i].Name
	fmt.Fprintf(&key, "%s %s", name, s.kind)
	fmt.Fprintf(&example, "%s %s since %.3f s", name, s.kind, float64(s.fromNs)/1e9)
	on, names, cycle := []int{i}, []string{name}, false
	for w := s; w.waitsFor >= 0; {
		j := int(w.waitsFor)
		name = c.cfg.Instances[j].Name
		if cycle = slices.Contains(on, j); cycle {
			key.WriteString(" → " + name + " (cycle)")
			example.WriteString(" → " + name + " (cycle)")
			break
		}
		on, names = append(on, j), append(names, name)
		l := c.lockDuring(j, s.fromNs)
		if l.kind == NoLock {
			why := fmt.Sprintf(" → %s (%s)", name, c.admissionStop(j, w.waitSnap))
			key.WriteString(why)
			example.WriteString(why)
			break
		}
		fmt.Fprintf(&key, " → %s %s", name, l.kind)
		fmt.Fprintf(&example, " → %s %s since %.3f s", name, l.kind, float64(l.fromNs)/1e9)
		w = l
	}
	c.chains.add(key.String(), names, cycle, s, example.String())
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
	if cause == engine.WaitBusy {
		return "own steps in flight"
	}
	return "own " + engine.WaitNames[cause]
}

// add counts spell s of the chain key, whose instances are names.
func (cs *lockChains) add(key string, names []string, cycle bool, s lockSpell, example string) {
	k, ok := cs.index[key]
	if !ok {
		if cs.index == nil {
			cs.index = map[string]int{}
		}
		k, cs.index[key] = len(cs.list), len(cs.list)
		cs.list = append(cs.list, results.LockupChain{Chain: key, Instances: names, Cycle: cycle, FirstNs: s.fromNs})
	}
	ch := &cs.list[k]
	d := s.toNs - s.fromNs
	ch.Spells++
	ch.Ns += d
	if d > ch.LongestNs {
		ch.LongestNs, ch.LongestFromNs, ch.Example = d, s.fromNs, example
	}
}
