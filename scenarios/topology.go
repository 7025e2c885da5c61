package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"handoff/hardware"
	"handoff/models/network"
)

// Topology places the instances in a hierarchy: NVLink domains inside
// datacenters. A KV transfer takes the path of the two instances' lowest
// common level: the domain link within a domain, the node link's NICs
// between domains of one datacenter (the fabric itself is taken as
// non-blocking), and between datacenters the node link's NICs plus the
// datacenter link, one egress and one ingress per datacenter shared by all
// traffic leaving or entering it. Domain and node link bandwidths are per
// GPU: an instance's links carry tp times the catalog figure. Path latency is
// the sum of the levels crossed (domain; node; node + datacenter). Without
// topology, `link` joins every pair of instances through one NIC each.
type Topology struct {
	DomainLink     string   `yaml:"domain_link"`           // catalog link within a domain, e.g. nvlink4
	NodeLink       string   `yaml:"node_link"`             // between domains of a datacenter, e.g. ib-ndr
	DatacenterLink string   `yaml:"datacenter_link"`       // between datacenters, e.g. tcp-100g
	Datacenters    []string `yaml:"datacenters,omitempty"` // names; none = one unnamed datacenter
	DomainSize     int      `yaml:"domain_size"`           // GPUs per NVLink domain (8 for HGX, 72 for NVL72)
}

// Placement puts a pool's instances in a datacenter, either all in one named
// domain or over domains of their own by a rule.
type Placement struct {
	Datacenter string `yaml:"datacenter,omitempty"` // default: the first of topology.datacenters
	// Domain names a domain of the datacenter; every pool naming it shares
	// it, and together they must fit in topology.domain_size GPUs.
	Domain string `yaml:"domain,omitempty"`
	// Rule places the pool in new domains no other pool uses: pack fills
	// each with as many instances as fit by GPUs (tp) before opening the
	// next; spread gives each instance its own. Default pack.
	Rule string `yaml:"rule,omitempty"`
}

// Topology defaults and limits.
const (
	defaultDomainLink     = "nvlink4"
	defaultNodeLink       = "ib-ndr"
	defaultDatacenterLink = "tcp-100g"
	defaultDomainSize     = 8
	defaultRule           = "pack"
	maxDatacenters        = 64
)

var placementRules = map[string]network.Rule{"pack": network.RulePack, "spread": network.RuleSpread}

// topologyDefaults fills the topology and every pool's placement when the
// scenario has a topology; without one it leaves placements as written.
func (l *Loaded) topologyDefaults() {
	t := l.Topology
	if t == nil {
		return
	}
	fill(l, "topology.domain_link", &t.DomainLink, defaultDomainLink)
	fill(l, "topology.node_link", &t.NodeLink, defaultNodeLink)
	fill(l, "topology.datacenter_link", &t.DatacenterLink, defaultDatacenterLink)
	fill(l, "topology.domain_size", &t.DomainSize, defaultDomainSize)
	for i := range l.Pools {
		p := &l.Pools[i]
		if p.Placement == nil {
			p.Placement = &Placement{}
		}
		at := fmt.Sprintf("pools[%d].placement.", i)
		if len(t.Datacenters) > 0 {
			fill(l, at+"datacenter", &p.Placement.Datacenter, t.Datacenters[0])
		}
		if p.Placement.Domain == "" {
			fill(l, at+"rule", &p.Placement.Rule, defaultRule)
		}
	}
}

// validateTopology checks the topology and the placements, and places the
// instances so that an over-filled domain is reported before building.
func (l *Loaded) validateTopology() error {
	t := l.Topology
	if t == nil {
		for i, p := range l.Pools {
			if p.Placement != nil {
				return l.errorf(fmt.Sprintf("pools[%d].placement", i), "needs a top-level topology")
			}
		}
		return nil
	}
	if l.Link.Kind != "" {
		return l.errorf("link", "give either link (one link kind between all instances) or topology, not both")
	}
	for _, f := range []struct{ name, value string }{{"domain_link", t.DomainLink}, {"node_link", t.NodeLink},
		{"datacenter_link", t.DatacenterLink}} {
		if f.value == "" {
			return l.errorf("topology."+f.name, "required: a link name (handoff catalog links)")
		}
	}
	if t.DomainSize < 1 || t.DomainSize > maxTP {
		return l.errorf("topology.domain_size", "must be in [1, %d] GPUs, got %d", maxTP, t.DomainSize)
	}
	if err := l.validateDatacenters(); err != nil {
		return err
	}
	_, err := l.place()
	return err
}

func (l *Loaded) validateDatacenters() error {
	dcs := l.Topology.Datacenters
	if len(dcs) > maxDatacenters {
		return l.errorf("topology.datacenters", "%d datacenters exceed the limit of %d", len(dcs), maxDatacenters)
	}
	for i, name := range dcs {
		at := fmt.Sprintf("topology.datacenters[%d]", i)
		switch {
		case strings.TrimSpace(name) == "":
			return l.errorf(at, "a datacenter name must not be empty")
		case slices.Index(dcs, name) < i:
			return l.errorf(at, "duplicate datacenter %q", name)
		}
	}
	return nil
}

// place assigns every instance, in the order buildPool adds them, its
// datacenter, domain and GPUs.
func (l *Loaded) place() ([]network.Place, error) {
	placer := network.NewPlacer(l.Topology.DomainSize)
	var all []network.Place
	for i := range l.Pools {
		ps, err := l.placePool(placer, i)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}

// placePool places pool i's instances. An autoscaled pool is built, and
// so placed, at its max: every instance it may start has its place from
// the start, the ones beyond its count after those of the count (by the
// rule, in further domains or the room left in the last; in a named
// domain, which must hold them all).
func (l *Loaded) placePool(placer *network.Placer, i int) ([]network.Place, error) {
	p := &l.Pools[i]
	at := fmt.Sprintf("pools[%d]", i)
	pl := p.Placement
	dc := l.datacenterIndex(pl.Datacenter)
	rule, ok := placementRules[pl.Rule]
	n := p.built()
	switch {
	case dc < 0 && len(l.Topology.Datacenters) == 0:
		return nil, l.errorf(at+".placement.datacenter", "unknown datacenter %q: topology.datacenters names none", pl.Datacenter)
	case dc < 0:
		return nil, l.errorf(at+".placement.datacenter", "unknown datacenter %q (known: %s)", pl.Datacenter,
			strings.Join(l.Topology.Datacenters, ", "))
	case pl.Domain != "" && pl.Rule != "":
		return nil, l.errorf(at+".placement", "give either domain or rule, not both")
	case pl.Domain != "":
		ps, err := placer.Named(dc, pl.Domain, n, p.TP*max(p.PP, 1))
		if err != nil {
			return nil, l.errorf(at+".placement.domain", "%v (topology.domain_size)%s", err, scaledNote(p))
		}
		return ps, nil
	case !ok:
		return nil, l.errorf(at+".placement.rule", "unknown rule %q (known: pack, spread)", pl.Rule)
	}
	ps, err := placer.ByRule(dc, rule, n, p.TP*max(p.PP, 1))
	if err != nil && p.PP > 1 {
		return nil, l.errorf(at+".pp", "an instance of pp %d × tp %d = %d GPUs does not fit in a domain of %d: placement "+
			"puts an instance in one domain; lower pp or tp, raise topology.domain_size, or drop the topology to run "+
			"the stages across nodes", p.PP, p.TP, p.PP*p.TP, l.Topology.DomainSize)
	}
	if err != nil {
		return nil, l.errorf(at+".tp", "%v: lower tp or raise topology.domain_size", err)
	}
	return ps, nil
}

// scaledNote explains, for a pool that autoscales above its count, why a
// domain must hold more instances than the count.
func scaledNote(p *Pool) string {
	if p.Autoscale == nil || p.Autoscale.Max == p.Count {
		return ""
	}
	return fmt.Sprintf("; the pool autoscales up to max %d instances, and each needs a place", p.Autoscale.Max)
}

// datacenterIndex is name's index in topology.datacenters, 0 for "" when
// none are named, and -1 if unknown.
func (l *Loaded) datacenterIndex(name string) int {
	dcs := l.Topology.Datacenters
	if len(dcs) == 0 && name == "" {
		return 0
	}
	return slices.Index(dcs, name)
}

// buildHierarchy joins the placed instances through the topology's links.
func (l *Loaded) buildHierarchy(b *Built, hw *hardware.Catalog) error {
	t := l.Topology
	h := network.Hierarchy{Datacenters: t.Datacenters}
	if len(h.Datacenters) == 0 {
		h.Datacenters = []string{""}
	}
	for _, f := range []struct {
		field, name string
		dst         *hardware.Link
	}{{"domain_link", t.DomainLink, &h.Domain}, {"node_link", t.NodeLink, &h.ScaleOut},
		{"datacenter_link", t.DatacenterLink, &h.WAN}} {
		link, err := hw.Link(f.name)
		if err != nil {
			return l.errorf("topology."+f.field, "%s", strings.TrimPrefix(err.Error(), "hardware: "))
		}
		*f.dst = link
	}
	places, err := l.place()
	if err != nil {
		return err
	}
	names := make([]string, len(b.Config.Instances))
	for i, in := range b.Config.Instances {
		names[i] = in.Name
	}
	b.Config.Topology = network.NewHierarchy(h, names, places)
	return nil
}
