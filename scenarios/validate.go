package scenarios

import (
	"fmt"
	"slices"
)

// validate checks every field that decoding cannot; errors name the field
// and its line.
func (l *Loaded) validate() error {
	s := &l.Scenario
	switch {
	case s.Name == "":
		return l.errorf("name", "required")
	case s.Model == "":
		return l.errorf("model", "required: a served-model name (handoff catalog models)")
	case s.SLO.TTFT <= 0 || s.SLO.TPOT <= 0:
		return l.errorf("slo", "ttft and tpot are required and must be positive (e.g. {ttft: 500ms, tpot: 50ms})")
	case s.SLO.Attainment <= 0 || s.SLO.Attainment > 1:
		return l.errorf("slo.attainment", "must be in (0, 1], got %g", s.SLO.Attainment)
	case s.Workload.RateScale <= 0:
		return l.errorf("workload.rate_scale", "must be positive, got %g", s.Workload.RateScale)
	case len(s.Pools) == 0:
		return l.errorf("pools", "at least one pool is required")
	}
	if err := l.validateWorkload(); err != nil {
		return err
	}
	if err := l.validatePools(); err != nil {
		return err
	}
	if !slices.Contains(routerPolicies, s.Router.Policy) {
		return l.errorf("router.policy", "unknown policy %q (known: %v)", s.Router.Policy, routerPolicies)
	}
	return nil
}

var routerPolicies = []string{"round_robin", "least_loaded"}

func (l *Loaded) validateWorkload() error {
	w := &l.Workload
	n := 0
	for _, set := range []bool{w.Synthetic != nil, w.SharedPrefix != nil, w.Trace != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return l.errorf("workload", "give exactly one of synthetic, shared_prefix or trace (got %d)", n)
	}
	switch {
	case w.Synthetic != nil:
		return l.locate("workload.synthetic", w.Synthetic.Validate())
	case w.SharedPrefix != nil:
		return l.locate("workload.shared_prefix", w.SharedPrefix.Validate())
	}
	return l.locate("workload.trace", w.Trace.Validate())
}

var (
	roles       = []string{"colocated", "prefill", "decode"}
	preemptions = []string{"recompute"}
	stepTimes   = []string{"roofline", "polynomial", "table"}
)

func (l *Loaded) validatePools() error {
	names := map[string]bool{}
	for i := range l.Pools {
		p := &l.Pools[i]
		at := fmt.Sprintf("pools[%d]", i)
		if err := l.validatePool(at, p); err != nil {
			return err
		}
		if names[p.Name] {
			return l.errorf(at+".name", "duplicate pool name %q", p.Name)
		}
		names[p.Name] = true
	}
	return nil
}

func (l *Loaded) validatePool(at string, p *Pool) error {
	e := &p.Engine
	switch {
	case p.Name == "":
		return l.errorf(at+".name", "required")
	case !slices.Contains(roles, p.Role):
		return l.errorf(at+".role", "unknown role %q (known: %v)", p.Role, roles)
	case p.Count < 1:
		return l.errorf(at+".count", "must be at least 1, got %d", p.Count)
	case p.Hardware == "":
		return l.errorf(at+".hardware", "required: an accelerator name (handoff catalog hardware)")
	case p.TP < 1:
		return l.errorf(at+".tp", "must be at least 1, got %d", p.TP)
	case !slices.Contains(preemptions, p.Preemption):
		return l.errorf(at+".preemption", "unknown policy %q (known: %v)", p.Preemption, preemptions)
	case !slices.Contains(stepTimes, p.StepTime.Model):
		return l.errorf(at+".step_time.model", "unknown model %q (known: %v)", p.StepTime.Model, stepTimes)
	case e.MaxNumBatchedTokens < 1:
		return l.errorf(at+".engine.max_num_batched_tokens", "must be positive, got %d", e.MaxNumBatchedTokens)
	case e.MaxNumSeqs < 1:
		return l.errorf(at+".engine.max_num_seqs", "must be positive, got %d", e.MaxNumSeqs)
	case e.BlockSize < 1:
		return l.errorf(at+".engine.block_size", "must be positive, got %d", e.BlockSize)
	case e.MemoryUtilization <= 0 || e.MemoryUtilization > 1:
		return l.errorf(at+".engine.memory_utilization", "must be in (0, 1], got %g", e.MemoryUtilization)
	case e.MaxModelLen < 0:
		return l.errorf(at+".engine.max_model_len", "must not be negative, got %d", e.MaxModelLen)
	case p.StepTime.MFU < 0 || p.StepTime.MFU > 1 || p.StepTime.MBU < 0 || p.StepTime.MBU > 1:
		return l.errorf(at+".step_time", "mfu and mbu must be in (0, 1]")
	}
	return nil
}
