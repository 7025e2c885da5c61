package perf

import (
	"handoff/models/strictyaml"
	"handoff/models/units"
)

// MinFactor is the smallest efficiency factor a scenario may set: below it
// a step would take longer than any run could simulate.
const MinFactor = 0.01

// RooflineSpec is the roofline's step_time section: overrides of the
// accelerator's factors for one pool (zero or omitted: the catalog's).
type RooflineSpec struct {
	MFU          float64         `yaml:"mfu,omitempty"`
	DecodeMFU    float64         `yaml:"decode_mfu,omitempty"`
	MBU          float64         `yaml:"mbu,omitempty"`
	StepOverhead *units.Duration `yaml:"step_overhead,omitempty"`
	// ExpertImbalance states the busiest device's expert tokens over the
	// mean under expert parallelism; 0 = from a uniform top-k draw.
	ExpertImbalance float64 `yaml:"expert_imbalance,omitempty"`
}

// Check implements Spec.
func (s RooflineSpec) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"mfu", s.MFU}, {"decode_mfu", s.DecodeMFU}, {"mbu", s.MBU}} {
		if !(f.v == 0 || f.v >= MinFactor && f.v <= 1) {
			return strictyaml.Fieldf(f.name, "must be in [%g, 1] (or omitted for the catalog value)", MinFactor)
		}
	}
	if !(s.ExpertImbalance == 0 || s.ExpertImbalance >= 1 && s.ExpertImbalance <= 1e3) {
		return strictyaml.Fieldf("expert_imbalance", "must be in [1, 1000] (or omitted for the top-k draw's)")
	}
	if s.StepOverhead != nil && *s.StepOverhead < 0 {
		return strictyaml.Fieldf("step_overhead", "must not be negative")
	}
	return nil
}

// New implements Spec.
func (s RooflineSpec) New(env Env) (StepTimer, error) {
	return NewRoofline(RooflineConfig{Model: env.Model, Device: env.Device, Layout: env.Layout, ScaleUp: env.ScaleUp,
		MFU: s.MFU, DecodeMFU: s.DecodeMFU, MBU: s.MBU, StepOverheadNs: s.overheadNs(), OverlapCPU: env.OverlapCPU, Compute: env.Compute, Release: env.Release,
		Experts: ExpertConfig{Imbalance: s.ExpertImbalance, ScaleOut: env.ScaleOut, Domain: env.Domain}})
}

// overheadNs is the overhead override, -1 for the catalog's.
func (s RooflineSpec) overheadNs() int64 {
	if s.StepOverhead == nil {
		return -1
	}
	return int64(*s.StepOverhead)
}
