package scenarios

import (
	"strconv"

	"handoff/hardware"
	"handoff/models/llm"
)

// Precision is the formats a pool serves its model in, overriding the
// catalog's: the dtype of every weight but the routed experts, of the
// routed experts, of the KV cache, and the format activations are in
// (compute: bf16, fp8 or fp4 tensor cores). Each part's matmuls run in
// the wider of its weights' format and compute; weights stored narrower
// are unpacked in the kernels (models/perf/precision.go). Omitted compute:
// the narrowest of the weights' formats the device has tensor cores for
// (bf16 if none), as vLLM picks W8A8 kernels for FP8 checkpoints on Hopper
// and weight-only ones where the format is missing.
type Precision struct {
	Weights string `yaml:"weights,omitempty"`
	Experts string `yaml:"experts,omitempty"`
	KV      string `yaml:"kv,omitempty"`
	Compute string `yaml:"compute,omitempty"`
}

// poolModel is the model as pool p serves it, and the compute format.
func (l *Loaded) poolModel(at string, p *Pool, dev hardware.Accelerator, m *llm.Model) (*llm.Model, string, error) {
	pr := p.Precision
	var dts [3]llm.DType
	for i, f := range []struct{ field, v string }{{"weights", pr.Weights}, {"experts", pr.Experts}, {"kv", pr.KV}} {
		if f.v == "" {
			continue
		}
		d, err := llm.ParseDType(f.v)
		if err != nil {
			return nil, "", l.errorf(at+".precision."+f.field, "%v", err)
		}
		dts[i] = d
	}
	if dts[1] != "" && m.Experts == 0 {
		return nil, "", l.errorf(at+".precision.experts", "%s is dense: it has no routed experts", m.Name)
	}
	pm := m.WithPrecision(dts[0], dts[1], dts[2])
	compute, err := l.computeFormat(at, pr.Compute, dev, pm)
	return pm, compute, err
}

// computeFormat checks the pool's compute format against the device, or
// picks the default (Precision).
func (l *Loaded) computeFormat(at, compute string, dev hardware.Accelerator, m *llm.Model) (string, error) {
	if compute == "" {
		compute = "bf16"
		for _, d := range []llm.DType{m.WeightDType, m.ExpertDType} {
			if f := d.TensorFormat(); d != "" && dev.PeakFLOPS(f) > 0 && formatBits[f] < formatBits[compute] {
				compute = f
			}
		}
		return compute, nil
	}
	if _, ok := formatBits[compute]; !ok {
		return "", l.errorf(at+".precision.compute", "unknown format %q (known: bf16, fp8, fp4)", compute)
	}
	if dev.PeakFLOPS(compute) == 0 {
		return "", l.errorf(at+".precision.compute", "%s has no %s tensor cores (its catalog entry gives no %s peak): "+
			"compute in a format it has, with the weights unpacked to it", dev.Name, compute, compute)
	}
	return compute, nil
}

// formatBits orders the compute formats by width.
var formatBits = map[string]int{"bf16": 16, "fp8": 8, "fp4": 4}

// checkKVFormats refuses prefill and decode pools whose KV caches differ in
// format: the NIXL connector copies blocks as they are.
func (l *Loaded) checkKVFormats(m *llm.Model) error {
	first, firstAt := "", ""
	for i := range l.Pools {
		p := &l.Pools[i]
		if p.Role == "colocated" {
			continue
		}
		kv := string(m.KVDType)
		if p.Precision.KV != "" {
			d, err := llm.ParseDType(p.Precision.KV)
			if err != nil {
				continue // reported by the pool's own build
			}
			kv = string(d)
		}
		if kv == "" {
			kv = string(llm.BF16)
		}
		at := "pools[" + strconv.Itoa(i) + "].precision.kv"
		if first == "" {
			first, firstAt = kv, at
		} else if kv != first {
			return l.errorf(at, "%s KV beside %s at %s: prefill and decode pools must keep their KV in one format "+
				"(the connector moves blocks as they are)", kv, first, firstAt)
		}
	}
	return nil
}
