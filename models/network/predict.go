package network

import "math"

// PredictNs estimates how long a new transfer of bytes along path would
// take if it started now: the path latency plus the bytes at the smallest
// fair share it would get on any link (the link's capacity split evenly
// among the transfers on it and the new one). It is an estimate for
// routers — the real rate changes as other transfers start and end — and
// changes nothing. Cost O(len(path) · active transfers).
func (n *Network) PredictNs(path []int32, latencyNs int64, bytes float64) int64 {
	if bytes <= 0 || len(path) == 0 {
		return latencyNs
	}
	rate := math.Inf(1) // bytes per ns
	for _, l := range path {
		rate = min(rate, n.capBps[l]/1e9/float64(n.flowsOn(l)+1))
	}
	if d := drainNs(bytes, rate); d < math.MaxInt64-latencyNs {
		return latencyNs + d
	}
	return math.MaxInt64 // a link on the path is down
}

// flowsOn counts the live transfers crossing link l.
func (n *Network) flowsOn(l int32) int {
	count := 0
	for i := range n.flows {
		if n.flows[i].live && onPath(n.flows[i].path, int(l)) {
			count++
		}
	}
	return count
}
