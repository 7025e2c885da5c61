package network

import "handoff/hardware"

// Topology maps an ordered pair of instances to the links a transfer
// between them crosses and the latency of that path. Two constructors build
// one: NewNICTopology (one link kind, one level) and NewHierarchy (NVLink
// domain ⊂ datacenter ⊂ set of datacenters). A path is worked out when
// asked for, from each instance's place and links, so a topology costs
// O(instances) memory, not a table of every pair. A Topology is immutable
// once built, so concurrent runs may share it.
type Topology struct {
	Caps     []float64 // per link, bytes per second
	Names    []string  // per link, for reports
	places   []spot    // per instance
	nics     []nic     // per instance: its links
	wan      []int32   // per datacenter: WAN egress at 2·dc, ingress at 2·dc+1; -1 if absent
	loopback bool      // a transfer from an instance to itself crosses its own links
	levelNs  [numLevels]int64
}

// spot is where an instance sits: datacenter and NVLink domain.
type spot struct{ dc, domain int }

// nic is one instance's link indices; -1 where it has no such link. Under
// a NIC topology, dom* are its egress and ingress.
type nic struct{ domEg, domIn, outEg, outIn int32 }

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
// Every pair is at LevelDomain with latency l.LatencyNs. Cost: O(n) time
// and memory.
func NewNICTopology(l hardware.Link, names []string, devices []int) *Topology {
	n := len(names)
	t := &Topology{places: make([]spot, n), nics: make([]nic, n), loopback: true}
	for i := range n {
		bps := float64(devices[i]) * l.BandwidthBps // each device has its own NIC
		eg, in := t.addLink(names[i]+"/egress", bps), t.addLink(names[i]+"/ingress", bps)
		t.nics[i] = nic{eg, in, -1, -1}
	}
	t.levelNs[LevelDomain] = l.LatencyNs
	return t
}

// addLink appends a link and returns its index.
func (t *Topology) addLink(name string, capBps float64) int32 {
	t.Names = append(t.Names, name)
	t.Caps = append(t.Caps, capBps)
	return int32(len(t.Caps) - 1)
}

// Instances is the number of instances the topology connects.
func (t *Topology) Instances() int { return len(t.places) }

// AppendPath appends the links from src to dst to links and returns the
// result and the path latency in ns: at most four links, worked out from
// the two instances' places (see NewHierarchy). Cost: O(1), no allocation
// when links has room.
func (t *Topology) AppendPath(links []int32, src, dst int) ([]int32, int64) {
	v := t.Level(src, dst)
	s, d := &t.nics[src], &t.nics[dst]
	switch {
	case src == dst && !t.loopback:
	case v == LevelDomain:
		links = append(links, s.domEg, d.domIn)
	case v == LevelDatacenter:
		links = append(links, s.outEg, d.outIn)
	default:
		links = append(links, s.outEg, t.wan[2*t.places[src].dc], t.wan[2*t.places[dst].dc+1], d.outIn)
	}
	return links, t.levelNs[v]
}

// Path returns the links from src to dst in a new slice and the path
// latency in ns; AppendPath is the same without the allocation.
func (t *Topology) Path(src, dst int) ([]int32, int64) { return t.AppendPath(nil, src, dst) }

// Level returns the lowest common level of src and dst.
func (t *Topology) Level(src, dst int) Level {
	s, d := t.places[src], t.places[dst]
	switch {
	case src == dst || s == d:
		return LevelDomain
	case s.dc != d.dc:
		return LevelWAN
	}
	return LevelDatacenter
}
