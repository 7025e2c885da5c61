package main

import (
	"slices"
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
)

// catalogRow returns the listing's row whose first column is name, split
// into its tab-separated columns.
func catalogRow(t *testing.T, listing, name string) []string {
	t.Helper()
	for _, line := range strings.Split(listing, "\n") {
		cols := strings.Split(line, "\t")
		if cols[0] == name {
			return cols
		}
	}
	t.Fatalf("no row %s in\n%s", name, listing)
	return nil
}

// TestListHardwareDomain checks the scale-up domain column (devices per
// domain, "-" where the catalog bounds none) and the FP8, FP4 and
// scale-out columns ("-" where a device has none), on the default catalog
// and on an added device with every field set.
func TestListHardwareDomain(t *testing.T) {
	c := hardware.Default()
	c.AddAccelerator(hardware.Accelerator{Name: "x4", Kind: hardware.KindGPU, BF16FLOPS: 1e15, FP8FLOPS: 2e15,
		FP4FLOPS: 4.5e15, ScaleUpLink: "nvlink5", ScaleUpDomain: 72, ScaleOutLink: "ib-ndr"})
	var b strings.Builder
	listHardware(&b, c)
	header := catalogRow(t, b.String(), "ACCELERATOR")
	for name, want := range map[string]map[string]string{
		"h100-sxm":  {"DOMAIN": "8", "FP8 DENSE": "1.98 PFLOPS"},
		"trainium2": {"DOMAIN": "16"},
		"wse-3":     {"DOMAIN": "-", "FP8 DENSE": "-", "FP4 DENSE": "-"},
		"groq-lpu":  {"DOMAIN": "-", "SCALE-OUT": "-"},
		"x4":        {"DOMAIN": "72", "FP4 DENSE": "4.5 PFLOPS", "SCALE-OUT": "ib-ndr", "SCALE-UP": "nvlink5"},
	} {
		row := catalogRow(t, b.String(), name)
		for col, v := range want {
			i := slices.Index(header, col)
			if i < 0 || i >= len(row) || row[i] != v {
				t.Errorf("%s %s: row %q, want %q", name, col, row, v)
			}
		}
	}
}

// TestListModels checks the attention kind (MHA models are not "gqa"), the
// sliding-window layers, the MoE columns and the precision columns,
// including a legacy size in bytes that names no dtype.
func TestListModels(t *testing.T) {
	c := llm.Default()
	legacy, err := llm.Spec{Name: "odd", Layers: 2, Hidden: 64, Heads: 4, KVHeads: 4, Intermediate: 128,
		Vocab: 100, ParamsTotal: 1e6, WeightBytes: 0.56, MaxContext: 64}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	c.AddModel(legacy)
	var b strings.Builder
	listModels(&b, c)
	header := catalogRow(t, b.String(), "MODEL")
	for name, want := range map[string]map[string]string{
		"llama-2-7b":   {"ATTENTION": "mha", "WEIGHT DTYPE": "bf16", "KV DTYPE": "bf16", "EXPERTS": "-", "DENSE LAYERS": "-"},
		"llama-3.1-8b": {"ATTENTION": "gqa", "SLIDING": "-"},
		"deepseek-v3": {"ATTENTION": "mla", "WEIGHT DTYPE": "fp8", "EXPERTS": "top-8 of 256", "SHARED": "1",
			"DENSE LAYERS": "3"},
		"gpt-oss-120b": {"WEIGHT DTYPE": "bf16/mxfp4", "SLIDING": "18 × 128", "SHARED": "0", "DENSE LAYERS": "0"},
		"odd":          {"WEIGHT DTYPE": "4.48 bits"},
	} {
		row := catalogRow(t, b.String(), name)
		for col, v := range want {
			i := slices.Index(header, col)
			if i < 0 || i >= len(row) || row[i] != v {
				t.Errorf("%s %s: row %q, want %q", name, col, row, v)
			}
		}
	}
}
