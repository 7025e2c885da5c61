package network

import "handoff/hardware"

// Topology maps a pair of instances to the links a transfer between them
// crosses and the latency of that path. This first topology gives every
// instance one network interface of a single link kind: a transfer leaves
// through the sender's egress and enters through the receiver's ingress, so
// transfers share bandwidth where they share an endpoint.
type Topology struct {
	Caps      []float64 // per link, bytes per second
	Names     []string  // per link, for reports
	paths     [][]int32 // src*n + dst → links
	latencyNs []int64   // src*n + dst → path latency
	n         int
}

// NewNICTopology connects n instances through per-instance egress and
// ingress links of kind l.
func NewNICTopology(n int, l hardware.Link, names []string) *Topology {
	t := &Topology{n: n, paths: make([][]int32, n*n), latencyNs: make([]int64, n*n)}
	for i := range n {
		t.Caps = append(t.Caps, l.BandwidthBps, l.BandwidthBps)
		t.Names = append(t.Names, names[i]+"/egress", names[i]+"/ingress")
	}
	for s := range n {
		for d := range n {
			t.paths[s*n+d] = []int32{int32(2 * s), int32(2*d + 1)}
			t.latencyNs[s*n+d] = l.LatencyNs
		}
	}
	return t
}

// Path returns the links from src to dst and the path latency.
func (t *Topology) Path(src, dst int) ([]int32, int64) {
	return t.paths[src*t.n+dst], t.latencyNs[src*t.n+dst]
}
