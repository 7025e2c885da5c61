package scenarios

import (
	"fmt"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/llm"
	"handoff/models/perf"
	"handoff/sim"
)

// policies maps the scenario's preemption names to the engine's.
var policies = map[string]engine.Policy{"recompute": engine.Recompute, "swap": engine.Swap, "reject": engine.Reject}

// applyPolicy sets a pool's preemption policy on its engine configuration
// and instance template. Swap sizes the host tier in blocks (host memory
// over the instance's block bytes: TP shards × bytes per shard) and prices
// each block's copy over the host link (one shard per device, in
// parallel); reject carries its threshold and phase.
func (l *Loaded) applyPolicy(at string, p *Pool, hw *hardware.Catalog, m *llm.Model, ecfg *engine.Config,
	inst *sim.Instance) error {
	ecfg.Preemption = policies[p.Preemption]
	inst.StreamKV = p.StreamKV
	applyHandoff(p, inst)
	applyContextRange(p, inst)
	if r := p.Reject; r != nil {
		inst.CacheHitThreshold, inst.RejectPhase = r.CacheHitThreshold, r.Phase
	}
	sw := p.Swap
	if sw == nil {
		return nil
	}
	shardBytes := p.layout().Memory(m, 0, 0, ecfg.BlockSize).BlockBytes
	ecfg.HostBlocks = int(float64(sw.HostMemory) / (shardBytes * float64(p.layout().RankDevices())))
	bw := float64(sw.HostBandwidth)
	if bw == 0 {
		link, err := hw.Link(defaultHostLink)
		if err != nil {
			return l.errorf(at+".swap.host_bandwidth", "%v", err)
		}
		bw = link.BandwidthBps
	}
	inst.Timer = perf.WithSwap(inst.Timer, shardBytes/bw*1e9)
	return nil
}

// owners returns who answers for the transfer and router time: the owner
// of the pool that claims it, or "nobody".
func (l *Loaded) owners() (transfer, router string, err error) {
	transfer, router = "nobody", "nobody"
	claimed := map[string]string{}
	for i, p := range l.Pools {
		for k, c := range p.Claims {
			if prev, ok := claimed[c]; ok {
				return "", "", l.errorf(fmt.Sprintf("pools[%d].claims[%d]", i, k), "%s is already claimed by pool %s", c, prev)
			}
			claimed[c] = p.Name
			owner := p.Owner
			if owner == "" {
				owner = p.Name
			}
			if c == "transfer" {
				transfer = owner
			} else {
				router = owner
			}
		}
	}
	return transfer, router, nil
}
