package hardware

import (
	"strings"

	"handoff/models/strictyaml"
	"handoff/models/units"
)

// AcceleratorSpec is an accelerator as written in YAML (the catalog file or a
// scenario's inline hardware). Resolve validates it and converts it to an
// Accelerator.
type AcceleratorSpec struct {
	Name             string          `yaml:"name"`
	Kind             Kind            `yaml:"kind"`
	Arch             Arch            `yaml:"arch,omitempty"` // sm80, sm90, sm100, cdna3, cdna4; omitted = not named
	Memory           units.Bytes     `yaml:"memory"`
	MemoryBandwidth  units.Bandwidth `yaml:"memory_bandwidth"`
	BF16             units.FLOPS     `yaml:"bf16"`
	FP8              units.FLOPS     `yaml:"fp8,omitempty"` // omitted = not supported
	FP4              units.FLOPS     `yaml:"fp4,omitempty"` // dense; omitted = no FP4 tensor cores
	MFU              float64         `yaml:"mfu"`
	MBU              float64         `yaml:"mbu"`
	StepOverhead     units.Duration  `yaml:"step_overhead"`
	ScaleUp          string          `yaml:"scale_up,omitempty"`        // link name; omitted = no tensor parallelism
	ScaleUpDomain    int             `yaml:"scale_up_domain,omitempty"` // devices the scale-up link joins; omitted = not bounded
	ScaleOut         string          `yaml:"scale_out,omitempty"`       // per-device NIC link between scale-up domains; omitted = none
	PowerW           float64         `yaml:"power_w"`
	CostPerHour      float64         `yaml:"cost_per_hour"` // USD per device-hour
	Source           string          `yaml:"source,omitempty"`
	EfficiencySource string          `yaml:"efficiency_source,omitempty"`
	FactorsFrom      string          `yaml:"factors_from,omitempty"` // borrow unset efficiency and serving fields

	ServingSpec `yaml:",inline"`

	// Kind wafer only (wafer.go).
	WaferSpec `yaml:",inline"`
}

// LinkSpec is a link as written in YAML. Resolve validates it and converts it
// to a Link.
type LinkSpec struct {
	Name      string          `yaml:"name"`
	Bandwidth units.Bandwidth `yaml:"bandwidth"` // per direction
	Latency   units.Duration  `yaml:"latency"`
	Source    string          `yaml:"source,omitempty"`
}

// maxScaleUpDomain bounds scale_up_domain; the largest real domains (a
// GB200 NVL72 rack, an NVL576 pod) are far below it.
const maxScaleUpDomain = 1 << 16

// canonicalName lower-cases and trims a catalog name.
func canonicalName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// checkName reports whether a canonical name is non-empty and made of
// lower-case letters, digits, '.', '_' and '-'.
func checkName(name string) error {
	if name == "" {
		return strictyaml.Fieldf("name", "required")
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return strictyaml.Fieldf("name", "%q: use letters, digits, '.', '_' and '-' only", name)
		}
	}
	return nil
}

// Resolve validates s and returns the Accelerator it describes, with its name
// lower-cased. Errors are *strictyaml.FieldError without a position (place them
// with strictyaml.Locate). It does not check that the scale-up and scale-out links
// exist; the catalog does.
func (s AcceleratorSpec) Resolve() (Accelerator, error) {
	name := canonicalName(s.Name)
	if err := checkName(name); err != nil {
		return Accelerator{}, err
	}
	kind := Kind(strings.ToLower(string(s.Kind)))
	checks := []struct {
		bad         bool
		field, want string
	}{
		{!kind.Valid(), "kind", "want one of gpu, trainium, wafer, lpu"},
		{!Arch(strings.ToLower(string(s.Arch))).Valid(), "arch", "want one of sm80, sm90, sm100, cdna3, cdna4 (or omitted)"},
		{!(s.Memory > 0), "memory", "must be positive"},
		{!(s.MemoryBandwidth > 0), "memory_bandwidth", "must be positive"},
		{!(s.BF16 > 0), "bf16", "must be positive"},
		{s.FP8 < 0, "fp8", "must not be negative"},
		{s.FP4 < 0, "fp4", "must not be negative"},
		{!(s.MFU > 0 && s.MFU <= 1 || s.MFU == 0 && s.FactorsFrom != ""), "mfu", "must be in (0, 1] (or omitted with factors_from)"},
		{!(s.MBU > 0 && s.MBU <= 1 || s.MBU == 0 && s.FactorsFrom != ""), "mbu", "must be in (0, 1] (or omitted with factors_from)"},
		{s.StepOverhead < 0, "step_overhead", "must not be negative"},
		{s.ScaleUpDomain < 0 || s.ScaleUpDomain > maxScaleUpDomain, "scale_up_domain", "must be in [0, 65536] devices (0 = not bounded)"},
		{!(s.PowerW >= 0), "power_w", "must not be negative"},
		{!(s.CostPerHour >= 0), "cost_per_hour", "must not be negative"},
	}
	for _, c := range checks {
		if c.bad {
			return Accelerator{}, strictyaml.Fieldf(c.field, "%s", c.want)
		}
	}
	if err := s.WaferSpec.check(kind); err != nil {
		return Accelerator{}, err
	}
	if err := s.ServingSpec.check(); err != nil {
		return Accelerator{}, err
	}
	return Accelerator{
		Name: name, Kind: kind, Arch: Arch(strings.ToLower(string(s.Arch))),
		MemoryBytes: float64(s.Memory), MemoryBandwidthBps: float64(s.MemoryBandwidth),
		BF16FLOPS: float64(s.BF16), FP8FLOPS: float64(s.FP8), FP4FLOPS: float64(s.FP4),
		MFU: s.MFU, MBU: s.MBU, StepOverheadNs: int64(s.StepOverhead),
		ScaleUpLink: canonicalName(s.ScaleUp), ScaleUpDomain: s.ScaleUpDomain, ScaleOutLink: canonicalName(s.ScaleOut),
		PowerW: s.PowerW, CostPerHour: s.CostPerHour,
		Source: s.Source, EfficiencySource: s.EfficiencySource, Wafer: s.WaferSpec.resolve(),
		Serving: s.ServingSpec.resolve(), FactorsFrom: canonicalName(s.FactorsFrom),
	}, nil
}

// Resolve validates s and returns the Link it describes, with its name
// lower-cased. Errors are *strictyaml.FieldError without a position.
func (s LinkSpec) Resolve() (Link, error) {
	name := canonicalName(s.Name)
	if err := checkName(name); err != nil {
		return Link{}, err
	}
	if !(s.Bandwidth > 0) {
		return Link{}, strictyaml.Fieldf("bandwidth", "must be positive")
	}
	if s.Latency < 0 {
		return Link{}, strictyaml.Fieldf("latency", "must not be negative")
	}
	return Link{Name: name, BandwidthBps: float64(s.Bandwidth), LatencyNs: int64(s.Latency), Source: s.Source}, nil
}

// Spec returns the YAML form of a, so a resolved catalog can be written back.
// Factors a borrowed are left unset, to be borrowed again.
func (a Accelerator) Spec() AcceleratorSpec {
	s := AcceleratorSpec{
		Name: a.Name, Kind: a.Kind, Arch: a.Arch,
		Memory: units.Bytes(a.MemoryBytes), MemoryBandwidth: units.Bandwidth(a.MemoryBandwidthBps),
		BF16: units.FLOPS(a.BF16FLOPS), FP8: units.FLOPS(a.FP8FLOPS), FP4: units.FLOPS(a.FP4FLOPS),
		MFU: a.MFU, MBU: a.MBU, StepOverhead: units.Duration(a.StepOverheadNs),
		ScaleUp: a.ScaleUpLink, ScaleUpDomain: a.ScaleUpDomain, ScaleOut: a.ScaleOutLink,
		PowerW: a.PowerW, CostPerHour: a.CostPerHour,
		Source: a.Source, EfficiencySource: a.EfficiencySource, WaferSpec: a.Wafer.spec(),
		ServingSpec: a.Serving.spec(), FactorsFrom: a.FactorsFrom,
	}
	a.unlend(&s)
	return s
}

// Spec returns the YAML form of l.
func (l Link) Spec() LinkSpec {
	return LinkSpec{Name: l.Name, Bandwidth: units.Bandwidth(l.BandwidthBps),
		Latency: units.Duration(l.LatencyNs), Source: l.Source}
}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindGPU, KindTrainium, KindWafer, KindLPU:
		return true
	}
	return false
}
