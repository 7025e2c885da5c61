package scenarios

import (
	"path/filepath"
	"strings"
	"testing"
)

// tinyInline declares an accelerator and a model inline; the same entries
// as testdata/catalog/tiny.yaml except for the link.
// Lines after minimal: 13 catalog, 14 accelerators, 15-16 the accelerator
// (mfu on 16), 17 models, 18-19 the model (kv_heads on 18).
const tinyInline = `catalog:
  accelerators:
    - {name: tiny-gpu, kind: gpu, memory: 24GB, memory_bandwidth: 1TB/s, bf16: 100TFLOPS,
       mfu: 0.5, mbu: 0.7, step_overhead: 1ms, power_w: 300, cost_per_hour: 1}
  models:
    - {name: tiny-llm, layers: 4, hidden: 1024, heads: 8, kv_heads: 8, intermediate: 4096,
       vocab: 32000, params_total: 1e8, max_context: 4096}
`

// tinyBlocks is the KV pool of tiny-llm on one 24 GB tiny-gpu at TP 1:
// KV per token = 2 (K and V) × 4 layers × 8 heads × 128 dims × 2 B =
// 16384 B, so a 16-token block is 262144 B; weights are 1e8 × 2 B = 0.2 GB;
// (0.9 × 24e9 − 0.2e9) / 262144 = 81634.5 → 81634 blocks.
const tinyBlocks = 81634

func TestInlineCatalog(t *testing.T) {
	doc := strings.Replace(minimal, "llama-3.1-8b", "tiny-llm", 1)
	doc = strings.Replace(doc, "h100-sxm", "tiny-gpu", 1) + tinyInline
	_, b, err := parseBuild(t, doc, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if b.Model.Name != "tiny-llm" {
		t.Errorf("model = %q", b.Model.Name)
	}
	if got := b.Config.Instances[0].Engine.NumBlocks; got != tinyBlocks {
		t.Errorf("blocks = %d, want %d", got, tinyBlocks)
	}
	if got := b.Config.Instances[0].Engine.MaxModelLen; got != 4096 {
		t.Errorf("max model len = %d, want the model's 4096", got)
	}
}

// TestInlineOverridesBuiltin halves h100-sxm's memory inline: the KV pool
// shrinks by (0.9 × 40e9) / (KV bytes per block) blocks.
func TestInlineOverridesBuiltin(t *testing.T) {
	_, full, err := parseBuild(t, minimal, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := minimal + `catalog:
  accelerators:
    - {name: h100-sxm, kind: gpu, memory: 40GB, memory_bandwidth: 3.35TB/s, bf16: 989.5TFLOPS,
       mfu: 0.65, mbu: 0.8, step_overhead: 1ms, scale_up: nvlink4, power_w: 700, cost_per_hour: 3}
`
	_, half, err := parseBuild(t, doc, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	blockBytes := full.Model.KVBytesPerToken() * 16
	want := int(0.9 * 40e9 / blockBytes)
	got := full.Config.Instances[0].Engine.NumBlocks - half.Config.Instances[0].Engine.NumBlocks
	if got < want-1 || got > want+1 { // two truncations
		t.Errorf("40 GB less memory removed %d blocks, want %d±1", got, want)
	}
	// The built-in catalogs are parsed once and shared: an override is the
	// overriding scenario's alone.
	_, after, err := parseBuild(t, minimal, "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := after.Config.Instances[0].Engine.NumBlocks, full.Config.Instances[0].Engine.NumBlocks; a != b {
		t.Errorf("after the override, the built-in h100-sxm holds %d blocks, before it %d", a, b)
	}
}

func TestInlineCatalogErrors(t *testing.T) {
	doc := strings.Replace(minimal, "llama-3.1-8b", "tiny-llm", 1)
	doc = strings.Replace(doc, "h100-sxm", "tiny-gpu", 1)
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"bad mfu", doc + strings.Replace(tinyInline, "mfu: 0.5", "mfu: 2", 1),
			[]string{"m.yaml:16: field catalog.accelerators[0].mfu: must be in (0, 1]"}},
		{"misspelt key", doc + strings.Replace(tinyInline, "kv_heads", "kv_head", 1),
			[]string{"m.yaml:18: field catalog.models[0].kv_head: unknown field (did you mean kv_heads?)"}},
		// 0.9 × 1e18 B / 262144 B per block = 3.4e12 blocks.
		{"memory too large to simulate", doc + strings.Replace(tinyInline, "memory: 24GB", "memory: 1000PB", 1),
			[]string{"m.yaml:11: field pools[0].engine.block_size: 3.43e+12 KV blocks per instance exceed the limit of 16777216"}},
		{"model unknown without the entry", doc, []string{`m.yaml:2: field model:`, `unknown model "tiny-llm"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseBuild(t, tt.doc, "m.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			checkError(t, err, tt.want...)
		})
	}
}

// TestCatalogFile loads a scenario whose catalog file is named relative to
// the scenario's folder, and uses its accelerator, link and model at TP 2.
func TestCatalogFile(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "with-catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	in := b.Config.Instances[0]
	if b.Model.Name != "tiny-llm" || in.GPUs != 2 {
		t.Errorf("model %q on %d GPUs, want tiny-llm on 2", b.Model.Name, in.GPUs)
	}
	// At TP 2 each rank holds half the weights (0.1 GB) and half the KV
	// heads (8192 B per token, 131072 B per block):
	// (0.9 × 24e9 − 0.1e9) / 131072 = 164031.9 → 164031 blocks.
	if in.Engine.NumBlocks != 164031 {
		t.Errorf("blocks = %d, want 164031", in.Engine.NumBlocks)
	}
}

func TestCatalogFileErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"bad-catalog.yaml", []string{filepath.Join("testdata", "catalog", "bad.yaml") +
			":4: field accelerators[0].memroy: unknown field (did you mean memory?)"}},
		{"missing-catalog.yaml", []string{filepath.Join("testdata", "missing-catalog.yaml") +
			":17: field catalog.files[0]:", "missing.yaml", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			l, err := Load(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if _, err = l.Build(); err == nil {
				t.Fatal("no error")
			}
			checkError(t, err, tt.want...)
		})
	}
}
