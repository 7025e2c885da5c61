package perf

import "handoff/models/llm"

// Precision.
//
// A pool computes its matmuls in one tensor-core format (Compute: bf16,
// fp8 or fp4), priced at the device's dense peak for it
// (hardware.Accelerator.PeakFLOPS); a device without that format is
// refused. Weights may be stored narrower than they are computed in — the
// MXFP4 experts of gpt-oss on a GPU without FP4 tensor cores, FP8 weights
// on one without FP8 — and are then unpacked inside the matmul kernels
// (weight-only quantization: Marlin, triton_kernels' matmul_ogs), in
// registers, under the weight loads: their bytes read are the stored
// ones, their matmuls run at the wider format's peak, and the unpacking
// costs no bound of its own (moekernels.go).

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

// expertScale converts the routed experts' bytes and FLOPs into the rest's
// units: priced at the rest's bandwidth (bw·MBU) and peak (peak·MFU), they
// take the time the experts' own bandwidth and peak would give them.
type expertScale struct{ bytes, flops float64 }

// expertScales is the expertScale of kernel on cfg's device: the experts'
// peak over the rest's (expertPeakScale), and for a weight-only kernel the
// accelerator's weight-only MoE efficiencies against MBU and MFU
// (hardware.Serving.WeightOnlyMoEMBU, WeightOnlyMoEMFU; unset: 1).
func expertScales(m *llm.Model, cfg RooflineConfig, kernel moeKernel) expertScale {
	s := expertScale{bytes: 1, flops: expertPeakScale(m, cfg)}
	if !kernel.weightOnly {
		return s
	}
	if e := cfg.Device.Serving.WeightOnlyMoEMBU; e > 0 {
		s.bytes = cfg.MBU / e
	}
	if e := cfg.Device.Serving.WeightOnlyMoEMFU; e > 0 {
		s.flops *= cfg.MFU / e
	}
	return s
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
