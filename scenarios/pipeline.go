package scenarios

import (
	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/perf"
)

// Pipeline parallelism for GPU pools (pp > 1): an instance's layers are
// split into pp stages as vLLM splits them (parallel.Layout.StageLayers),
// each stage on tp devices of its own. Stages fill a scale-up domain in
// order (⌊domain / tp⌋ of them per domain); a stage boundary inside a
// domain crosses the scale-up link, one between domains the scale-out
// link. Each stage's step time is the pool's step-time model over the
// model cut to the stage's layers (llm.Model.Stage), and the engine keeps
// up to pp micro-batches in flight (models/engine/pipeline.go, and
// sim/pipeline.go for the stages' clocks).

// rankBlockBytes is one KV block over all the devices of one of p's
// data-parallel ranks: every stage's layers, as a lower tier holds it.
// (A device's share times the devices would count the largest stage's
// share pp times.)
func rankBlockBytes(p *Pool, m *llm.Model, blockSize int) float64 {
	lay := p.layout()
	if p.Wafer == nil {
		lay.PP = 1
	}
	return lay.Memory(m, 0, 0, blockSize).BlockBytes * float64(lay.RankDevices())
}

// maxPP bounds a pool's pipeline stages.
const maxPP = 64

// checkPipeline refuses a pipeline whose stages cannot be placed: a
// stage's tp beyond one scale-up domain, or stages across domains on
// hardware with no scale-out link, or, with a topology, an instance
// larger than topology.domain_size (placement puts an instance in one
// domain).
func (l *Loaded) checkPipeline(at string, p *Pool, dev hardware.Accelerator) error {
	if p.PP <= 1 {
		return nil
	}
	d := dev.ScaleUpDomain
	if l.Topology != nil {
		d = l.Topology.DomainSize
	}
	devices := p.TP * p.PP
	switch {
	case d == 0 || devices <= d:
		return nil
	case l.Topology != nil:
		return l.errorf(at+".pp", "pp %d × tp %d = %d GPUs exceed topology.domain_size %d: an instance is placed in "+
			"one domain; lower pp or tp, or drop the topology to run the stages across nodes over %s's scale_out link",
			p.PP, p.TP, devices, d, dev.Name)
	case p.TP > d:
		return l.errorf(at+".tp", "tp %d spans more than one scale-up domain of %s (%d devices on %s): "+
			"each pipeline stage's tensor parallelism must stay inside one", p.TP, dev.Name, d, dev.ScaleUpLink)
	case dev.ScaleOutLink == "":
		return l.errorf(at+".pp", "pp %d × tp %d = %d devices span more than one scale-up domain of %s (%d devices "+
			"on %s) and %s has no scale_out link for the activations between stages: lower pp or tp",
			p.PP, p.TP, devices, dev.Name, d, dev.ScaleUpLink, dev.Name)
	}
	return nil
}

// pipelineTimer builds pool p's pipeline (pp > 1): a step timer per stage
// size, priced by the pool's step-time model over the stage's layers, and
// the hops between stages.
func (l *Loaded) pipelineTimer(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator, m *llm.Model,
	compute string) (*perf.Pipeline, error) {
	lay := p.layout()
	stage := lay
	stage.PP = 1
	layers := lay.StageLayers(m)
	byLayers := map[int]perf.StepTimer{}
	timers := make([]perf.StepTimer, len(layers))
	for k, n := range layers {
		if byLayers[n] == nil {
			t, err := l.stepTimerFor(at, p, hw, dev, m.Stage(n), compute, stage)
			if err != nil {
				return nil, err
			}
			byLayers[n] = t
		}
		timers[k] = byLayers[n]
	}
	hops, err := l.pipelineHops(at, p, hw, dev, m)
	if err != nil {
		return nil, err
	}
	pipe, err := perf.NewPipeline(timers, hops)
	if err != nil {
		return nil, l.errorf(at+".pp", "%v", err)
	}
	return pipe, nil
}

// pipelineHops are the links between p's consecutive stages: the
// scale-up link inside a domain, the scale-out link (the topology's
// node_link, else the accelerator's NIC) between domains.
func (l *Loaded) pipelineHops(at string, p *Pool, hw *hardware.Catalog, dev hardware.Accelerator,
	m *llm.Model) ([]perf.Hop, error) {
	perDomain := p.PP // stages one scale-up domain holds
	if d := dev.ScaleUpDomain; d > 0 && l.Topology == nil {
		perDomain = max(d/p.TP, 1)
	}
	hops := make([]perf.Hop, p.PP-1)
	bytes := perf.ActivationBytesPerToken(m.Hidden, p.TP)
	for k := range hops {
		name := dev.ScaleUpLink
		if (k+1)%perDomain == 0 {
			name = l.scaleOut(dev)
		}
		link, err := hw.Link(name)
		if err != nil {
			return nil, l.errorf(at+".hardware", "link between pipeline stages of %s: %v", dev.Name, err)
		}
		if !(link.BandwidthBps > 0) {
			return nil, l.errorf(at+".pp", "pipeline stages of %s are joined by %s, which has no bandwidth", dev.Name, name)
		}
		hops[k] = perf.Hop{LatencyNs: link.LatencyNs, NsPerToken: bytes * 1e9 / link.BandwidthBps}
	}
	return hops, nil
}
