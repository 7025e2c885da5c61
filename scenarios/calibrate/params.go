package calibrate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Param is one free parameter of a fit: a named catalog field with bounds.
// The fit searches u in (−∞, ∞) and maps it into (Lo, Hi) by a logistic,
// so a bound is never crossed and never reached.
type Param struct {
	Name   string  // the catalog YAML key (for LinkParam, the link's key)
	OnLink bool    // the field belongs to the accelerator's scale-up link
	Lo, Hi float64 // bounds, in the field's unit (fractions, or ns)
	Init   float64 // where every fit starts, whatever the catalog holds, so a refit reproduces it
	Doc    string  // what it moves
	Number bool    // written as a plain number even above 1 (a rate), not as a duration
	get    func(*Hardware) float64
	set    func(*Hardware, float64)
}

// Get returns the parameter's value in h.
func (p Param) Get(h *Hardware) float64 { return p.get(h) }

// Set writes v into h.
func (p Param) Set(h *Hardware, v float64) { p.set(h, v) }

// params is the table of every parameter a fit may free, by name.
func params() []Param {
	acc := func(name string, lo, init, hi float64, doc string, f func(*Hardware) *float64) Param {
		return Param{Name: name, Lo: lo, Hi: hi, Init: init, Doc: doc,
			get: func(h *Hardware) float64 { return *f(h) }, set: func(h *Hardware, v float64) { *f(h) = v }}
	}
	return []Param{
		acc("mfu", 0.05, 0.6, 1, "prompt tokens' fraction of peak FLOP/s", func(h *Hardware) *float64 { return &h.Accel.MFU }),
		{Name: "decode_mfu", Lo: 0.01, Hi: 1, Init: 0.5, Doc: "decode tokens' fraction of peak FLOP/s (unset = mfu)",
			get: func(h *Hardware) float64 { return h.Accel.EffectiveDecodeMFU() },
			set: func(h *Hardware, v float64) { h.Accel.Serving.DecodeMFU = v }},
		acc("allreduce_bandwidth", 0.02, 0.5, 1, "share of the scale-up link's bandwidth a TP all-reduce reaches (moves TP > 1 only)",
			func(h *Hardware) *float64 { return &h.Accel.Serving.AllReduceBW }),
		acc("mbu", 0.2, 0.8, 1, "fraction of peak HBM bandwidth", func(h *Hardware) *float64 { return &h.Accel.MBU }),
		{Name: "step_overhead", Lo: 0, Hi: 10e6, Init: 1e6, Doc: "fixed cost per engine step, ns",
			get: func(h *Hardware) float64 { return float64(h.Accel.StepOverheadNs) },
			set: func(h *Hardware, v float64) { h.Accel.StepOverheadNs = int64(math.Round(v)) }},
		acc("step_per_seq", 0, 10e3, 200e3, "CPU per scheduled sequence per step, ns", func(h *Hardware) *float64 { return &h.Accel.Serving.StepPerSeqNs }),
		acc("step_per_token", 0, 100, 5e3, "CPU per scheduled token per step, ns", func(h *Hardware) *float64 { return &h.Accel.Serving.StepPerTokenNs }),
		acc("layer_floor", 0, 5e3, 200e3, "least GPU time per layer of a pure-decode step, ns", func(h *Hardware) *float64 { return &h.Accel.Serving.LayerFloorNs }),
		acc("layer_floor_mixed", 0, 5e3, 500e3, "least GPU time per layer of a step with prompt tokens, ns", func(h *Hardware) *float64 { return &h.Accel.Serving.LayerFloorMixedNs }),
		acc("frontend_latency", 0, 3e6, 30e6, "client to engine per request, ns", func(h *Hardware) *float64 { return &h.Accel.Serving.FrontendNs }),
		acc("first_token_emit", 0, 1e6, 20e6, "engine to client for the first token, ns", func(h *Hardware) *float64 { return &h.Accel.Serving.FirstEmitNs }),
		acc("weight_only_moe_mbu", 0.05, 0.6, 1, "fraction of peak HBM bandwidth weight-only MoE kernels reach (Marlin, matmul_ogs; moves FP4 experts on GPUs without FP4 tensor cores only)",
			func(h *Hardware) *float64 { return &h.Accel.Serving.WeightOnlyMoEMBU }),
		acc("weight_only_moe_mfu", 0.05, 0.5, 1, "fraction of peak FLOP/s weight-only MoE kernels reach (as weight_only_moe_mbu)",
			func(h *Hardware) *float64 { return &h.Accel.Serving.WeightOnlyMoEMFU }),
		acc("allreduce_bandwidth_large", 0.02, 0.6, 1, "share of the scale-up link an all-reduce over 8 MiB reaches (NCCL; moves TP > 1 only)",
			func(h *Hardware) *float64 { return &h.Accel.Serving.AllReduceBWLarge }),
		{Name: "latency", OnLink: true, Lo: 100, Hi: 20e3, Init: 2e3, Doc: "scale-up link latency per ring hop, ns (moves TP > 1 only)",
			get: func(h *Hardware) float64 { return float64(h.Link.LatencyNs) },
			set: func(h *Hardware, v float64) { h.Link.LatencyNs = int64(math.Round(v)) }},
	}
}

// Measured are the parameters fitted to serving measurements (an H100
// under vLLM): every step term, the front end and the scale-up latency.
func Measured() []string {
	return []string{"mfu", "decode_mfu", "mbu", "step_overhead", "step_per_seq", "step_per_token",
		"frontend_latency", "latency", "allreduce_bandwidth"}
}

// MoEMeasured are the parameters the measured P/D runs of a MXFP4 MoE
// fit after the serving fit (a second stage, holding the first's), per
// accelerator: the bandwidth and compute shares its weight-only MoE kernels
// reach, and NCCL's share of the link for the large all-reduces of long
// prompts — terms the dense serving set never exercises. The MoE layers'
// other terms are their kernels' (experts touched, tile padding, bytes as
// stored) and their one fixed cost (moe_layer_fixed) is measured; the Ray
// Serve layers those runs went through are not fitted either: their
// scenarios give them as measured (gateway.latency and gateway.hop) and the
// sim walks the P/D path piece by piece.
func MoEMeasured() []string {
	return []string{"weight_only_moe_mbu", "weight_only_moe_mfu", "allreduce_bandwidth_large"}
}

// ClearMoE zeroes h's MoEMeasured fields, so that the first stage of a
// fit sees none of what the second fits and reruns to the same values.
func ClearMoE(h *Hardware) {
	s := &h.Accel.Serving
	s.AllReduceBWLarge, s.WeightOnlyMoEMBU, s.WeightOnlyMoEMFU = 0, 0, 0
}

// DeviceOnly are the parameters the device, not the serving software,
// sets: what step profiles from another software stack can still tell
// (Source.Written).
func DeviceOnly() []string {
	return []string{"mfu", "decode_mfu", "mbu"}
}

// StepOnly are the parameters step-time profiles can identify: the front
// end never appears in one step's time, so it cannot be fitted from them.
func StepOnly() []string {
	return []string{"mfu", "decode_mfu", "mbu", "step_overhead", "step_per_seq", "step_per_token"}
}

// Lookup returns the named parameters, in order. An unknown name is an
// error listing the known ones.
func Lookup(names []string) ([]Param, error) {
	all := params()
	var out []Param
	for _, n := range names {
		i := indexOf(all, n)
		if i < 0 {
			known := make([]string, len(all))
			for j, p := range all {
				known[j] = p.Name
			}
			return nil, fmt.Errorf("calibrate: unknown parameter %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func indexOf(ps []Param, name string) int {
	for i, p := range ps {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// toU maps x in (lo, hi) to the unbounded search space; x is first moved
// 0.1% of the range inside the bounds, so a start on a bound (a zero
// overhead) has a finite image.
func (p Param) toU(x float64) float64 {
	eps := 1e-3 * (p.Hi - p.Lo)
	t := (min(max(x, p.Lo+eps), p.Hi-eps) - p.Lo) / (p.Hi - p.Lo)
	return math.Log(t / (1 - t))
}

// quantize rounds v to what the catalog can hold (CatalogFields): 4
// significant digits for a fraction, a whole ns for a time. A fit reports
// and writes the quantized values, so the plain comparison run from the
// catalog it wrote reproduces its report exactly.
func (p Param) quantize(v float64) float64 {
	if p.Hi > 1 {
		return math.Round(v)
	}
	q, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return q
}

// fromU maps u back into (lo, hi).
func (p Param) fromU(u float64) float64 {
	return p.Lo + (p.Hi-p.Lo)/(1+math.Exp(-u))
}
