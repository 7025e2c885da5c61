package network

import (
	"math"
	"slices"
)

// scratch holds per-link working state for the max-min computation.
type scratch struct {
	left   []float64 // capacity not yet given out, bytes per ns
	unfrz  []int32   // unfrozen flows on the link
	frozen []bool    // per flow slot
	mark   []uint64  // per link: epoch in which it was last counted busy
	epoch  uint64
	links  []int32  // links carrying a flow, ascending: the only ones filling looks at
	listed []uint64 // per link: the rates() round in which it joined links
	round  uint64
}

// resize returns buf with length n, reusing its storage; contents are stale.
func resize[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// advanceTo drains every active flow at its current rate up to nowNs; flows
// that finish draining move to the delayed list to wait out their latency.
func (n *Network) advanceTo(nowNs int64) {
	if nowNs < n.nowNs {
		panic("network: time went backwards")
	}
	if n.active == 0 {
		n.nowNs = nowNs
		return
	}
	n.rates()
	for nowNs > n.nowNs && n.active > 0 {
		step := nowNs - n.nowNs
		for _, i := range n.live {
			f := &n.flows[i]
			step = min(step, drainNs(f.bytes, f.rate))
		}
		n.drain(step)
	}
	n.nowNs = nowNs
}

// drain advances time by dt with constant rates, retiring drained flows.
func (n *Network) drain(dt int64) {
	n.countBusy(dt)
	n.nowNs += dt
	kept := n.live[:0]
	for _, i := range n.live {
		f := &n.flows[i]
		f.bytes -= f.rate * float64(dt)
		if f.bytes > f.rate*0.5 {
			kept = append(kept, i)
			continue
		}
		f.live = false
		f.doneNs = n.nowNs + f.latencyNs
		n.delayed = append(n.delayed, flow{ref: f.ref, doneNs: f.doneNs}) // the slot keeps its path's storage
		n.free = append(n.free, i)
		n.active--
		n.sameRate = false
	}
	n.live = kept
	n.rates()
}

// countBusy adds dt to the busy time of every link carrying a flow.
func (n *Network) countBusy(dt int64) {
	n.scratch.epoch++
	if len(n.scratch.mark) < len(n.capBps) {
		n.scratch.mark = make([]uint64, len(n.capBps))
	}
	for _, i := range n.live {
		for _, l := range n.flows[i].path {
			if n.scratch.mark[l] != n.scratch.epoch {
				n.scratch.mark[l] = n.scratch.epoch
				n.stats[l].BusyNs += dt
			}
		}
	}
}

// rates recomputes max-min fair rates by progressive filling: repeatedly
// find the link whose remaining capacity split among its unfrozen flows is
// smallest, give each of those flows that share, and remove them.
func (n *Network) rates() {
	if n.sameRate || n.active == 0 {
		n.sameRate = true
		return
	}
	s := &n.scratch
	s.left = resize(s.left, len(n.capBps))
	s.unfrz = resize(s.unfrz, len(n.capBps))
	s.frozen = resize(s.frozen, len(n.flows))
	s.listed = resize(s.listed, len(n.capBps)) // zero-filled when new; rounds start at 1
	s.links = s.links[:0]
	s.round++
	for _, i := range n.live {
		s.frozen[i] = false
		for _, l := range n.flows[i].path {
			if s.listed[l] != s.round {
				s.listed[l] = s.round
				s.links = append(s.links, l)
				s.left[l], s.unfrz[l] = n.capBps[l]/1e9, 0
			}
			s.unfrz[l]++
		}
	}
	slices.Sort(s.links) // ties go to the lowest link, as a scan of all would
	for n.fillOnce() {
	}
	n.sameRate = true
}

// fillOnce freezes the flows of the current bottleneck link. It reports
// false when every flow is frozen.
func (n *Network) fillOnce() bool {
	s := &n.scratch
	best, share := -1, math.Inf(1)
	for _, l := range s.links {
		if s.unfrz[l] > 0 && s.left[l]/float64(s.unfrz[l]) < share {
			best, share = int(l), s.left[l]/float64(s.unfrz[l])
		}
	}
	if best < 0 {
		return false
	}
	for _, i := range n.live {
		f := &n.flows[i]
		if s.frozen[i] || !onPath(f.path, best) {
			continue
		}
		f.rate = share
		s.frozen[i] = true
		for _, l := range f.path {
			s.left[l] -= share
			s.unfrz[l]--
		}
	}
	return true
}

func onPath(path []int32, l int) bool {
	for _, p := range path {
		if int(p) == l {
			return true
		}
	}
	return false
}
