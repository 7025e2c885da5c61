package llm

import (
	"fmt"
	"strings"
)

// DType is the number format a model's weights or KV cache are stored in.
// The empty DType stands for a size given in bytes (the legacy weight_bytes
// and kv_bytes fields) that names no format; it computes like BF16.
type DType string

// The storage formats a catalog entry or a pool may name.
const (
	BF16  DType = "bf16"  // bfloat16, 2 bytes
	FP16  DType = "fp16"  // IEEE half, 2 bytes
	FP8   DType = "fp8"   // FP8 (E4M3 as served), 1 byte
	MXFP4 DType = "mxfp4" // OCP microscaling FP4: E2M1 + one E8M0 scale per 32
	NVFP4 DType = "nvfp4" // NVIDIA FP4: E2M1 + one FP8 E4M3 scale per 16
)

// knownDTypes lists the formats in the order error messages name them.
func knownDTypes() [5]DType { return [...]DType{BF16, FP16, FP8, MXFP4, NVFP4} }

// Bytes is the storage size of one element, its share of the block scale
// included: 2 for bf16 and fp16, 1 for fp8; mxfp4 4.25/8 = 0.53125 (4-bit
// E2M1 elements and one 8-bit E8M0 scale per block of 32, OCP Microscaling
// Formats (MX) Specification v1.0, section 5); nvfp4 4.5/8 = 0.5625 (E2M1
// elements and one FP8 E4M3 scale per block of 16, NVIDIA's "Introducing
// NVFP4 for Efficient and Accurate Low-Precision Inference", NVIDIA
// technical blog, June 2025; the one FP32 scale per tensor it also keeps is
// negligible). 0 for the empty DType.
func (d DType) Bytes() float64 {
	switch d {
	case BF16, FP16:
		return 2
	case FP8:
		return 1
	case MXFP4:
		return 4.25 / 8
	case NVFP4:
		return 4.5 / 8
	}
	return 0
}

// TensorFormat is the tensor-core format a matmul over weights stored in d
// runs at, as hardware.Accelerator.PeakFLOPS takes it: "fp8" for fp8, "fp4"
// for mxfp4 and nvfp4, else "bf16". fp16 maps to "bf16": every catalog
// device has equal FP16 and BF16 dense peaks, so the catalog lists one. The
// empty DType (a size in bytes without a format) computes in bf16.
func (d DType) TensorFormat() string {
	switch d {
	case FP8:
		return "fp8"
	case MXFP4, NVFP4:
		return "fp4"
	}
	return "bf16"
}

// ParseDType returns the DType named s, case-insensitively and ignoring
// surrounding space. An unknown name is an error listing the known ones.
func ParseDType(s string) (DType, error) {
	d := DType(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range knownDTypes() {
		if d == k {
			return d, nil
		}
	}
	return "", fmt.Errorf("unknown dtype %q (want one of %s)", s, dtypeNames())
}

func dtypeNames() string {
	names := make([]string, 0, 5)
	for _, d := range knownDTypes() {
		names = append(names, string(d))
	}
	return strings.Join(names, ", ")
}

// dtypeOfBytes is the DType whose Bytes is b, or "" if none is: how a legacy
// weight_bytes or kv_bytes figure is named.
func dtypeOfBytes(b float64) DType {
	for _, d := range knownDTypes() {
		if d != FP16 && d.Bytes() == b {
			return d
		}
	}
	return ""
}
