package perf

import (
	"handoff/hardware"
	"handoff/models/llm"
)

// Precision.
//
// A pool computes its matmuls in one tensor-core format (Compute: bf16,
// fp8 or fp4), priced at the device's dense peak for it
// (hardware.Accelerator.PeakFLOPS); a device without that format is
// refused. Weights may be stored narrower than they are computed in — the
// MXFP4 experts of gpt-oss on a GPU without FP4 tensor cores, FP8 weights
// on one without FP8 — and are then unpacked inside the matmul kernels
// (weight-only quantization), at Serving.DequantRate weights per second:
// a fourth bound of the step beside compute, memory and the floor. Their
// bytes read are the stored ones.

// formatBits orders the tensor-core formats by width.
var formatBits = map[string]int{"bf16": 16, "fp8": 8, "fp4": 4}

// knownFormat reports whether f names a compute format ("" is bf16).
func knownFormat(f string) bool { _, ok := formatBits[computeName(f)]; return ok }

// computeName is the compute format f names, "" being bf16.
func computeName(f string) string {
	if f == "" {
		return "bf16"
	}
	return f
}

// unpacked reports whether weights stored as d are unpacked to compute
// before their matmuls: stored narrower than the compute format.
func unpacked(d llm.DType, compute string) bool {
	return formatBits[d.TensorFormat()] < formatBits[computeName(compute)]
}

// matmulFormat is the format a matmul of weights stored as d runs in when
// activations are in compute: the wider of the two (W4A16 runs in bf16,
// W4A8 in fp8, W8A8 in fp8).
func matmulFormat(d llm.DType, compute string) string {
	w, a := d.TensorFormat(), computeName(compute)
	if formatBits[w] > formatBits[a] {
		return w
	}
	return a
}

// expertPeakScale is the non-expert matmuls' peak over the routed experts'
// on cfg's device: 1 when both run in one format, below 1 when the experts'
// format is faster (MXFP4 experts computed in fp4 beside bf16 attention).
func expertPeakScale(m *llm.Model, cfg RooflineConfig) float64 {
	rest := cfg.Device.PeakFLOPS(matmulFormat(m.WeightDType, cfg.Compute))
	experts := cfg.Device.PeakFLOPS(matmulFormat(expertDType(m), cfg.Compute))
	if experts == rest || experts == 0 {
		return 1
	}
	return rest / experts
}

// dequantNs is the time one device takes to unpack params weights stored
// as d when the step computes in compute; 0 when they need no unpacking or
// the device charges none.
func dequantNs(params float64, d llm.DType, compute string, dev hardware.Accelerator) float64 {
	rate := dev.Serving.DequantRate
	if rate == 0 || !unpacked(d, compute) {
		return 0
	}
	return params / rate * 1e9
}

// moeFloor is the least GPU time the MoE layers add to a step:
// MoELayers × Serving.MoELayerFloorNs.
func moeFloor(m *llm.Model, dev hardware.Accelerator) float64 {
	return float64(m.MoELayers()) * dev.Serving.MoELayerFloorNs
}
