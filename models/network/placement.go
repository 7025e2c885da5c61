package network

import "fmt"

// Rule says how a pool's instances are laid over fresh NVLink domains.
type Rule uint8

// The placement rules.
const (
	// RulePack fills each new domain with as many instances as fit by GPUs
	// (⌊domain GPUs / instance GPUs⌋) before opening the next.
	RulePack Rule = iota
	// RuleSpread gives each instance a domain of its own.
	RuleSpread
)

// Placer assigns instances to NVLink domains of a fixed GPU capacity. Named
// domains are shared by every call that names them; rule-placed instances
// get domains of their own that no other call uses. Domain ids are dense,
// in order of first use, and unique across datacenters.
type Placer struct {
	domainGPUs int
	used       []int // GPUs taken, per domain id
	named      map[namedDomain]int
}

type namedDomain struct {
	dc   int
	name string
}

// NewPlacer returns a placer for domains of domainGPUs GPUs; it panics if
// domainGPUs < 1.
func NewPlacer(domainGPUs int) *Placer {
	if domainGPUs < 1 {
		panic("network: domain size must be positive")
	}
	return &Placer{domainGPUs: domainGPUs, named: map[namedDomain]int{}}
}

// Domains is the number of domains opened so far.
func (p *Placer) Domains() int { return len(p.used) }

// Named places count instances of gpus GPUs each in the domain called name
// of datacenter dc, opening it on first use. It fails, placing nothing, if
// they would take the domain past its capacity.
func (p *Placer) Named(dc int, name string, count, gpus int) ([]Place, error) {
	checkCount(count, gpus)
	k := namedDomain{dc, name}
	id, ok := p.named[k]
	if !ok {
		id = p.open()
		p.named[k] = id
	}
	if total := p.used[id] + count*gpus; total > p.domainGPUs || total < 0 {
		return nil, fmt.Errorf("domain %q would hold %d GPUs (%d already placed), more than the domain size of %d",
			name, total, p.used[id], p.domainGPUs)
	}
	p.used[id] += count * gpus
	out := make([]Place, count)
	for i := range out {
		out[i] = Place{Datacenter: dc, Domain: id, GPUs: gpus}
	}
	return out, nil
}

// ByRule places count instances of gpus GPUs each in new domains of
// datacenter dc by rule r. It fails if one instance does not fit a domain.
func (p *Placer) ByRule(dc int, r Rule, count, gpus int) ([]Place, error) {
	checkCount(count, gpus)
	if gpus > p.domainGPUs {
		return nil, fmt.Errorf("an instance of %d GPUs does not fit in a domain of %d", gpus, p.domainGPUs)
	}
	per := 1
	if r == RulePack {
		per = p.domainGPUs / gpus
	}
	out := make([]Place, count)
	id := -1
	for i := range out {
		if i%per == 0 {
			id = p.open()
		}
		p.used[id] += gpus
		out[i] = Place{Datacenter: dc, Domain: id, GPUs: gpus}
	}
	return out, nil
}

func (p *Placer) open() int {
	p.used = append(p.used, 0)
	return len(p.used) - 1
}

func checkCount(count, gpus int) {
	if count < 0 || gpus < 1 {
		panic("network: negative instance count or GPUs < 1")
	}
}
