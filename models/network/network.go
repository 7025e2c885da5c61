// Package network models KV-cache transfers over shared links. A transfer
// crosses a path of links; concurrent transfers share each link max-min
// fairly, and every rate is recomputed whenever a transfer starts or ends. A
// transfer's time is its path latency plus its bytes drained at the rates it
// was given.
package network

import (
	"math"
	"slices"
)

// Network is the set of links and the transfers in flight on them.
type Network struct {
	capBps   []float64 // per link, bytes per second
	flows    []flow    // slots; inactive slots are reused
	live     []int32   // the active slots, ascending: every loop over flows walks these
	free     []int32   // free flow slots
	delayed  []flow    // drained, waiting out their path latency
	active   int
	nowNs    int64
	stats    []LinkStats
	scratch  scratch
	sameRate bool // rates valid since the last change
	ownCaps  bool // capBps is the network's own copy (SetCapacity)
}

// LinkStats are cumulative counters of one link.
type LinkStats struct {
	Bytes     float64 // bytes carried
	BusyNs    int64   // time with at least one transfer on it
	Transfers int64   // transfers that crossed it
}

type flow struct {
	ref       int32
	path      []int32
	bytes     float64 // remaining
	rate      float64 // bytes per ns
	latencyNs int64
	doneNs    int64 // for delayed flows
	live      bool
}

// New returns a network of links with the given per-direction capacities in
// bytes per second.
func New(capBps []float64) *Network {
	for _, c := range capBps {
		if !(c > 0) {
			panic("network: link capacity must be positive")
		}
	}
	return &Network{capBps: capBps, stats: make([]LinkStats, len(capBps))}
}

// Links is the number of links.
func (n *Network) Links() int { return len(n.capBps) }

// Stats returns the counters of link l.
func (n *Network) Stats(l int) LinkStats { return n.stats[l] }

// Active is the number of transfers not yet complete.
func (n *Network) Active() int { return n.active + len(n.delayed) }

// Start begins a transfer of bytes along path at nowNs; ref is returned by
// Advance when it completes. The network keeps a copy of path (in a
// reused slot: no allocation once as many transfers have been in flight),
// so the caller may reuse its slice.
func (n *Network) Start(ref int32, path []int32, latencyNs int64, bytes float64, nowNs int64) {
	n.advanceTo(nowNs)
	f := flow{ref: ref, bytes: bytes, latencyNs: latencyNs, live: true}
	for _, l := range path {
		n.stats[l].Bytes += bytes
		n.stats[l].Transfers++
	}
	if bytes <= 0 || len(path) == 0 {
		f.doneNs = nowNs + latencyNs
		n.delayed = append(n.delayed, f) // its path is never read again
		return
	}
	slot := int32(len(n.flows))
	if k := len(n.free); k > 0 {
		slot = n.free[k-1]
		f.path = append(n.flows[slot].path[:0], path...)
		n.flows[slot] = f
		n.free = n.free[:k-1]
	} else {
		f.path = slices.Clone(path)
		n.flows = append(n.flows, f)
	}
	at, _ := slices.BinarySearch(n.live, slot)
	n.live = slices.Insert(n.live, at, slot)
	n.active++
	n.sameRate = false
}

// NextNs is the time of the next completion, or math.MaxInt64 if none.
// Predictions hold the rates of the moment, so a transfer that sped up
// when another finished draining may have run out its latency since the
// last call: it completes now, not in the past.
func (n *Network) NextNs() int64 {
	n.rates()
	next := int64(math.MaxInt64)
	for _, i := range n.live {
		if f := &n.flows[i]; f.rate > 0 { // else it stalls on a link that is down
			next = min(next, n.nowNs+drainNs(f.bytes, f.rate)+f.latencyNs)
		}
	}
	for i := range n.delayed {
		next = min(next, max(n.delayed[i].doneNs, n.nowNs))
	}
	return next
}

// Advance moves the network to nowNs and appends to done the refs of the
// transfers complete by then, in a deterministic order (completion time,
// then start order of their slots).
func (n *Network) Advance(nowNs int64, done []int32) []int32 {
	n.advanceTo(nowNs)
	kept := n.delayed[:0]
	for _, f := range n.delayed {
		if f.doneNs <= nowNs {
			done = append(done, f.ref)
		} else {
			kept = append(kept, f)
		}
	}
	n.delayed = kept
	return done
}

// drainNs is the whole nanoseconds needed to send bytes at rate (bytes/ns);
// math.MaxInt64 at rate 0 (a link that is down).
func drainNs(bytes, rate float64) int64 {
	if !(rate > 0) {
		return math.MaxInt64
	}
	return int64(math.Ceil(bytes/rate - 1e-9))
}
