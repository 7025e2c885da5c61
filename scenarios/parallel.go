package scenarios

import (
	"errors"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
	"handoff/models/perf"
	"handoff/sim"
)

// dpRanks makes the instance template a data-parallel rank when the pool
// has dp > 1: its step time must price a whole group.
func (l *Loaded) dpRanks(at string, p *Pool, tmpl *sim.Instance) error {
	if p.DP == 1 {
		return nil
	}
	if _, ok := tmpl.Timer.(perf.GroupTimer); !ok {
		return l.errorf(at+".step_time.model", "%s cannot price the synchronous steps of dp %d ranks: use the roofline",
			p.StepTime.Model, p.DP)
	}
	tmpl.DPRanks, tmpl.DPBalance = p.DP, p.DPRouting == "balancer"
	return nil
}

// checkLayout refuses a layout vLLM cannot shard the model over
// (parallel.Layout.Check) or, without a topology, one whose instance spans
// more devices than the accelerator's scale-up domain joins (with a
// topology, placement checks tp against topology.domain_size).
func (l *Loaded) checkLayout(at string, p *Pool, dev hardware.Accelerator, m *llm.Model) error {
	lay := p.layout()
	var fe *parallel.FieldError
	if err := lay.Check(m); errors.As(err, &fe) {
		return l.errorf(at+"."+fe.Field, "%s", fe.Msg)
	}
	d := dev.ScaleUpDomain
	switch {
	case l.Topology != nil || d == 0 || lay.Devices()/lay.PP <= d: // pipeline stages may span domains (checkPipeline)
	case lay.DP == 1:
		return l.errorf(at+".tp", "tp %d spans more than one scale-up domain of %s (%d devices on %s): "+
			"lower tp, or give a topology whose domain_size holds it", p.TP, dev.Name, d, dev.ScaleUpLink)
	case p.TP > d:
		return l.errorf(at+".tp", "tp %d spans more than one scale-up domain of %s (%d devices on %s): "+
			"a data-parallel rank's tensor parallelism must stay inside one", p.TP, dev.Name, d, dev.ScaleUpLink)
	case dev.ScaleOutLink == "":
		return l.errorf(at+".dp", "dp × tp = %d devices span more than one scale-up domain of %s (%d devices "+
			"on %s) and %s has no scale_out link for the all-to-all between them: lower dp, or give a topology",
			lay.Devices(), dev.Name, d, dev.ScaleUpLink, dev.Name)
	}
	return nil
}

// kvIn is the KV a transfer moves into a decoder of pool p, per prompt
// token (parallel.Layout.Wire). A wafer takes the prefiller's KV once and
// re-lays it out (staging): its layout is one stage wide.
func kvIn(m *llm.Model, p *Pool) sim.KVSize {
	w := p.layout().Wire(m, p.Engine.BlockSize)
	return sim.KVSize{PerToken: w.PerToken, WindowPerToken: w.WindowPerToken, WindowTokens: w.WindowTokens}
}

// scaleOut names the link between scale-up domains that an
// expert-parallel all-to-all crosses: the topology's node link, else the
// accelerator's scale_out NIC ("" for none).
func (l *Loaded) scaleOut(dev hardware.Accelerator) string {
	if l.Topology != nil {
		return l.Topology.NodeLink
	}
	return dev.ScaleOutLink
}
