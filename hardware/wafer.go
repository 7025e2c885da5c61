package hardware

import (
	"handoff/models/strictyaml"
	"handoff/models/units"
)

// Wafer holds the figures only a wafer-scale accelerator (kind wafer) has:
// what the wafer step-time model (models/perf.Wafer) needs beyond the
// roofline figures, and the default rate at which KV made by another kind
// of device is re-laid-out for the wafer's compiled placement. Zero for
// other kinds.
type Wafer struct {
	// LayerLatencyNs and WidthLatencyNs give the dataflow latency of one
	// token across one decoder layer, beyond the SRAM-bandwidth and compute
	// terms: LayerLatencyNs + WidthLatencyNs·hidden/1000. A token crosses
	// every layer of the model in turn, so a wafer holding l layers of a
	// model of hidden width h adds l times that to a step.
	LayerLatencyNs int64
	// WidthLatencyNs is the per-layer latency per 1,000 units of hidden
	// width (see LayerLatencyNs).
	WidthLatencyNs int64
	// PrefillEfficiency is the share of the decode MFU that prompt
	// processing reaches on the wafer, in (0, 1].
	PrefillEfficiency float64
	// StagingBps is the default rate, bytes per second, at which arriving
	// KV is re-laid-out into the wafer's slots (0 = no staging cost).
	StagingBps float64
	// PipelineLink names the link between wafers pipelined together.
	PipelineLink string
}

// WaferSpec is Wafer as written in YAML, inline in an accelerator entry.
type WaferSpec struct {
	LayerLatency      units.Duration  `yaml:"layer_latency,omitempty"`
	WidthLatency      units.Duration  `yaml:"width_latency,omitempty"`
	PrefillEfficiency float64         `yaml:"prefill_efficiency,omitempty"`
	StagingRate       units.Bandwidth `yaml:"staging_rate,omitempty"`
	PipelineLink      string          `yaml:"pipeline_link,omitempty"`
}

// check validates the wafer fields of an accelerator of kind k: a wafer
// needs its layer and width latencies and prefill efficiency; other kinds
// take none.
func (w WaferSpec) check(k Kind) error {
	if k != KindWafer {
		if w != (WaferSpec{}) {
			return strictyaml.Fieldf(w.firstField(), "applies to kind wafer only, not %s", k)
		}
		return nil
	}
	switch {
	case !(w.LayerLatency > 0):
		return strictyaml.Fieldf("layer_latency", "required for a wafer and must be positive (e.g. 6.7us per decoder layer)")
	case !(w.WidthLatency > 0):
		return strictyaml.Fieldf("width_latency", "required for a wafer and must be positive "+
			"(e.g. 2.5us per layer per 1,000 of hidden width)")
	case !(w.PrefillEfficiency > 0 && w.PrefillEfficiency <= 1):
		return strictyaml.Fieldf("prefill_efficiency", "required for a wafer and must be in (0, 1] (a share of mfu), got %g",
			w.PrefillEfficiency)
	case !(w.StagingRate >= 0):
		return strictyaml.Fieldf("staging_rate", "must not be negative")
	}
	return nil
}

// firstField names the first wafer field w sets.
func (w WaferSpec) firstField() string {
	switch {
	case w.LayerLatency != 0:
		return "layer_latency"
	case w.WidthLatency != 0:
		return "width_latency"
	case w.PrefillEfficiency != 0:
		return "prefill_efficiency"
	case w.StagingRate != 0:
		return "staging_rate"
	}
	return "pipeline_link"
}

func (w WaferSpec) resolve() Wafer {
	return Wafer{LayerLatencyNs: int64(w.LayerLatency), WidthLatencyNs: int64(w.WidthLatency),
		PrefillEfficiency: w.PrefillEfficiency, StagingBps: float64(w.StagingRate),
		PipelineLink: canonicalName(w.PipelineLink)}
}

func (w Wafer) spec() WaferSpec {
	return WaferSpec{LayerLatency: units.Duration(w.LayerLatencyNs), WidthLatency: units.Duration(w.WidthLatencyNs),
		PrefillEfficiency: w.PrefillEfficiency, StagingRate: units.Bandwidth(w.StagingBps),
		PipelineLink: w.PipelineLink}
}
