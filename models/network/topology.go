package network

import "handoff/hardware"

// Topology maps an ordered pair of instances to the links a transfer
// between them crosses and the latency of that path. Two constructors build
// one: NewNICTopology (one link kind, one level) and NewHierarchy (NVLink
// domain ⊂ datacenter ⊂ set of datacenters). A Topology is immutable once
// built, so concurrent runs may share it.
type Topology struct {
	Caps    []float64 // per link, bytes per second
	Names   []string  // per link, for reports
	n       int
	off     []int32 // pair src*n+dst crosses hops[off[k]:off[k+1]]
	hops    []int32
	level   []Level // per pair
	levelNs [numLevels]int64
}

// Level is the lowest level of the hierarchy that two instances share,
// which decides the path between them.
type Level uint8

// The levels, innermost first.
const (
	LevelDomain     Level = iota // same NVLink domain (every pair of a NIC topology)
	LevelDatacenter              // same datacenter, different domains: the scale-out fabric
	LevelWAN                     // different datacenters
	numLevels
)

// String is the level's name as links are named after it.
func (v Level) String() string {
	switch v {
	case LevelDomain:
		return "domain"
	case LevelDatacenter:
		return "datacenter"
	case LevelWAN:
		return "wan"
	}
	return "level?"
}

// NewNICTopology connects the named instances through per-instance egress
// and ingress links of kind l, named "<name>/egress" and "<name>/ingress":
// a transfer leaves through the sender's egress and enters through the
// receiver's ingress (also from an instance to itself), so transfers share
// bandwidth where they share an endpoint. Link figures are per device: an
// instance of devices[i] devices (its tensor-parallel ranks, each with its
// own NIC, sending its KV shard in parallel) gets devices[i] × l's
// bandwidth, as the hierarchy gives a TP instance's domain and node links.
// Every pair is at LevelDomain with latency l.LatencyNs. Cost: O(n²) time
// and memory.
func NewNICTopology(l hardware.Link, names []string, devices []int) *Topology {
	n := len(names)
	t := newTopology(n, 2)
	for i := range n {
		bps := float64(devices[i]) * l.BandwidthBps // each device has its own NIC
		t.addLink(names[i]+"/egress", bps)
		t.addLink(names[i]+"/ingress", bps)
	}
	t.levelNs[LevelDomain] = l.LatencyNs
	for s := range n {
		for d := range n {
			t.addPath(LevelDomain, int32(2*s), int32(2*d+1))
		}
	}
	return t
}

// maxInstances bounds a topology so that its O(n²) path table, at most six
// links a pair, stays addressable by int32 offsets.
const maxInstances = 16384

// newTopology returns an empty topology of n instances with room for
// hopsPerPair links on every pair's path (a hint).
func newTopology(n, hopsPerPair int) *Topology {
	if n < 0 || n > maxInstances {
		panic("network: instance count out of range")
	}
	return &Topology{n: n, off: make([]int32, 1, n*n+1), level: make([]Level, 0, n*n),
		hops: make([]int32, 0, hopsPerPair*n*n)}
}

// addLink appends a link and returns its index.
func (t *Topology) addLink(name string, capBps float64) int32 {
	t.Names = append(t.Names, name)
	t.Caps = append(t.Caps, capBps)
	return int32(len(t.Caps) - 1)
}

// addPath appends the path of the next pair in src-major order.
func (t *Topology) addPath(v Level, links ...int32) {
	t.hops = append(t.hops, links...)
	t.off = append(t.off, int32(len(t.hops)))
	t.level = append(t.level, v)
}

// Instances is the number of instances the topology connects.
func (t *Topology) Instances() int { return t.n }

// Path returns the links from src to dst and the path latency in ns. The
// slice is shared: callers must not modify it. Cost: O(1).
func (t *Topology) Path(src, dst int) ([]int32, int64) {
	k := src*t.n + dst
	a, b := t.off[k], t.off[k+1]
	return t.hops[a:b:b], t.levelNs[t.level[k]]
}

// Level returns the lowest common level of src and dst.
func (t *Topology) Level(src, dst int) Level { return t.level[src*t.n+dst] }
