package network

// Faults: a link that goes down or degrades for a while.

// SetCapacity changes link l's capacity to bps bytes per second at nowNs:
// the transfers on it drain at their old rates until then and share the
// new capacity from then on (max-min fairness re-solved). A capacity of 0
// takes the link down: the transfers crossing it stall, keeping the bytes
// they have left, until it comes back. Panics on a negative capacity or a
// time before the network's. The network keeps its own copy of the
// capacities (the slice New was given is not modified).
func (n *Network) SetCapacity(l int, bps float64, nowNs int64) {
	if !(bps >= 0) {
		panic("network: negative link capacity")
	}
	n.advanceTo(nowNs)
	if !n.ownCaps {
		n.capBps, n.ownCaps = append([]float64(nil), n.capBps...), true
	}
	n.capBps[l] = bps
	n.sameRate = false
}

// Capacity is link l's capacity now, in bytes per second.
func (n *Network) Capacity(l int) float64 { return n.capBps[l] }
