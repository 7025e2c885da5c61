package network

import (
	"fmt"

	"handoff/hardware"
)

// Hierarchy is the link of each level of a placed cluster and the names of
// its datacenters. Domain and ScaleOut bandwidths are per GPU, as the
// catalog gives them (one NVLink port set, one NIC per GPU); WAN bandwidth
// is per datacenter.
type Hierarchy struct {
	Domain      hardware.Link // within an NVLink domain (nvlink4, nvlink5)
	ScaleOut    hardware.Link // between domains of one datacenter (ib-ndr, roce-400g)
	WAN         hardware.Link // between datacenters (tcp-100g)
	Datacenters []string      // names by index, for link names; at least one
}

// Place is where an instance sits and how many GPUs it has.
type Place struct {
	Datacenter int // index into Hierarchy.Datacenters
	Domain     int // two instances share a domain iff Datacenter and Domain are both equal
	GPUs       int // ≥ 1: the instance's links carry GPUs × the per-GPU bandwidth
}

// NewHierarchy connects placed instances; names and places are indexed by
// instance. The path between two instances depends on their lowest common
// level:
//
//	same domain:      src/domain-egress → dst/domain-ingress
//	same datacenter:  src/scaleout-egress → dst/scaleout-ingress
//	other datacenter: src/scaleout-egress → dc:A/wan-egress → dc:B/wan-ingress → dst/scaleout-ingress
//
// The scale-out fabric itself is taken as non-blocking: only the NICs
// constrain it. Each instance's domain and scale-out links have GPUs times
// the per-GPU bandwidth (tensor-parallel ranks send their KV shards in
// parallel); each datacenter's WAN egress and ingress are shared by every
// transfer leaving or entering it.
//
// Path latency is the sum of one latency per level crossed: the domain
// link's; the scale-out link's; the scale-out plus the WAN link's. The
// segments are in series, so the first byte pays each; the scale-out
// latency is counted once on a WAN path because it is a NIC-to-NIC figure
// and the two partial fabric crossings make about one (microseconds against
// the WAN's milliseconds either way). A path from an instance to itself is
// empty, with the domain latency.
//
// Links no pair crosses are left out (an instance alone in its domain has
// no domain links; WAN links exist only with two occupied datacenters), so
// reports list only links that can carry traffic. It panics on mismatched
// lengths, a datacenter index out of range or GPUs < 1. Cost: O(n) time
// and memory (a map of the occupied domains); paths are worked out when
// asked for (Topology.AppendPath).
func NewHierarchy(h Hierarchy, names []string, places []Place) *Topology {
	checkPlaces(h, names, places)
	t := &Topology{places: make([]spot, len(places))}
	for i, p := range places {
		t.places[i] = spot{p.Datacenter, p.Domain}
	}
	t.nics, t.wan = t.hierarchyLinks(h, names, places)
	t.levelNs = [numLevels]int64{h.Domain.LatencyNs, h.ScaleOut.LatencyNs, h.ScaleOut.LatencyNs + h.WAN.LatencyNs}
	return t
}

func checkPlaces(h Hierarchy, names []string, places []Place) {
	if len(names) != len(places) {
		panic("network: names and places differ in length")
	}
	for _, p := range places {
		if p.Datacenter < 0 || p.Datacenter >= len(h.Datacenters) {
			panic("network: datacenter index out of range")
		}
		if p.GPUs < 1 {
			panic("network: an instance needs at least one GPU")
		}
	}
}

type domainKey struct{ dc, domain int }

// hierarchyLinks adds the links some pair crosses: per instance its domain
// and scale-out links, then per occupied datacenter its WAN links (egress
// at 2·dc, ingress at 2·dc+1 of the returned slice; -1 if absent).
func (t *Topology) hierarchyLinks(h Hierarchy, names []string, places []Place) ([]nic, []int32) {
	perDomain := map[domainKey]int{}
	domainsIn := make([]int, len(h.Datacenters))
	for _, p := range places {
		k := domainKey{p.Datacenter, p.Domain}
		if perDomain[k]++; perDomain[k] == 1 {
			domainsIn[p.Datacenter]++
		}
	}
	occupied := 0
	for _, n := range domainsIn {
		if n > 0 {
			occupied++
		}
	}
	nics := make([]nic, len(places))
	for i, p := range places {
		nc := nic{-1, -1, -1, -1}
		g := float64(p.GPUs)
		if perDomain[domainKey{p.Datacenter, p.Domain}] > 1 {
			nc.domEg = t.addLink(names[i]+"/domain-egress", g*h.Domain.BandwidthBps)
			nc.domIn = t.addLink(names[i]+"/domain-ingress", g*h.Domain.BandwidthBps)
		}
		if domainsIn[p.Datacenter] > 1 || occupied > 1 {
			nc.outEg = t.addLink(names[i]+"/scaleout-egress", g*h.ScaleOut.BandwidthBps)
			nc.outIn = t.addLink(names[i]+"/scaleout-ingress", g*h.ScaleOut.BandwidthBps)
		}
		nics[i] = nc
	}
	wan := make([]int32, 2*len(h.Datacenters))
	for dc, n := range domainsIn {
		wan[2*dc], wan[2*dc+1] = -1, -1
		if n > 0 && occupied > 1 {
			name := datacenterName(h.Datacenters, dc)
			wan[2*dc] = t.addLink(name+"/wan-egress", h.WAN.BandwidthBps)
			wan[2*dc+1] = t.addLink(name+"/wan-ingress", h.WAN.BandwidthBps)
		}
	}
	return nics, wan
}

// datacenterName is "dc:<name>", or "dc:<index>" for an unnamed datacenter.
func datacenterName(names []string, dc int) string {
	if names[dc] == "" {
		return fmt.Sprintf("dc:%d", dc)
	}
	return "dc:" + names[dc]
}
