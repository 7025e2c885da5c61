package llm

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"handoff/models/strictyaml"
)

func mustModel(t *testing.T, name string) *Model {
	t.Helper()
	m, err := Default().Model(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKVBytesPerToken checks the figures of kv_bytes_per_token.csv (copied
// here so the test runs without the shared data) and models not in it,
// computed by hand.
func TestKVBytesPerToken(t *testing.T) {
	tests := []struct {
		name string
		want float64
	}{
		{"llama-3.1-8b", 131072}, {"llama-3.1-70b", 327680}, {"llama-3.1-405b", 516096},
		{"qwen2.5-7b", 57344}, {"qwen3-14b", 163840}, {"qwen3-30b-a3b", 98304},
		{"qwen3-235b-a22b", 192512}, {"mixtral-8x7b", 131072}, {"gpt-oss-120b", 73728},
		{"deepseek-v3", 70272},      // 61·(512+64)·2
		{"llama-2-7b", 524288},      // 2·32·32·128·2
		{"llama-2-70b", 327680},     // 2·80·8·128·2
		{"codellama-34b", 196608},   // 2·48·8·128·2
		{"opt-13b", 819200},         // 2·40·40·128·2
		{"opt-66b", 2359296},        // 2·64·72·128·2
		{"deepseek-r1", 70272},      // 61·(512+64)·2
		{"kimi-k2", 70272},          // 61·(512+64)·2
		{"deepseek-v2-lite", 31104}, // 27·(512+64)·2
		{"glm-4.5", 376832},         // 2·92·8·128·2
		{"minimax-m2", 253952},      // 2·62·8·128·2
		{"gpt-oss-20b", 49152},      // 2·24·8·64·2
	}
	for _, tt := range tests {
		if got := mustModel(t, tt.name).KVBytesPerToken(); got != tt.want {
			t.Errorf("%s: KVBytesPerToken = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestKVBytesMatchSharedCSV compares with the shared reference CSV itself.
func TestKVBytesMatchSharedCSV(t *testing.T) {
	f, err := os.Open("../../../shared/data/catalog/kv_bytes_per_token.csv")
	if err != nil {
		t.Skip("shared data not available:", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	c, checked := Default(), 0
	for _, row := range rows[1:] {
		m, err := c.Model(row[0])
		if err != nil {
			continue // a model this catalog does not ship (Qwen2.5-72B, Qwen3-8B, Qwen3-32B)
		}
		want, err := strconv.ParseFloat(row[9], 64)
		if err != nil {
			t.Fatalf("%s: %v", row[0], err)
		}
		if got := m.KVBytesPerToken(); got != want {
			t.Errorf("%s: KVBytesPerToken = %v, CSV says %v", row[0], got, want)
		}
		checked++
	}
	if checked != 10 {
		t.Errorf("checked %d models against the CSV, want 10", checked)
	}
}

func TestKVBytesPerTokenPerShard(t *testing.T) {
	tests := []struct {
		name string
		tp   int
		want float64
	}{
		{"llama-3.1-70b", 1, 327680},
		{"llama-3.1-70b", 4, 81920},  // 2 kv heads per rank: 2·80·2·128·2
		{"llama-3.1-70b", 8, 40960},  // 1 per rank
		{"llama-3.1-70b", 16, 40960}, // replicated: still 1 per rank
		{"qwen2.5-7b", 3, 28672},     // ceil(4/3) = 2: 2·28·2·128·2
		{"qwen2.5-7b", 8, 14336},     // 2·28·1·128·2
		{"opt-66b", 8, 294912},       // 9 per rank: 2·64·9·128·2
		{"opt-66b", 3, 786432},       // 24 per rank
		{"deepseek-v3", 8, 70272},    // MLA latent replicated on every rank
	}
	for _, tt := range tests {
		if got := mustModel(t, tt.name).KVBytesPerTokenPerShard(tt.tp); got != tt.want {
			t.Errorf("%s tp=%d: %v, want %v", tt.name, tt.tp, got, tt.want)
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("tp=0 did not panic")
		}
	}()
	mustModel(t, "llama-3.1-8b").KVBytesPerTokenPerShard(0)
}

func TestKVBytesForContext(t *testing.T) {
	oss := mustModel(t, "gpt-oss-120b")
	if got := oss.KVBytesForContext(1000); got != 18*1000*2048+18*128*2048 {
		t.Errorf("gpt-oss-120b at 1000 tokens = %v", got)
	}
	if got := oss.KVBytesForContext(100); got != 36*100*2048 { // below the window: all layers hold every token
		t.Errorf("gpt-oss-120b at 100 tokens = %v", got)
	}
	l := mustModel(t, "llama-3.1-8b")
	if got := l.KVBytesForContext(1000); got != 1000*131072 {
		t.Errorf("llama at 1000 tokens = %v", got)
	}
}

func TestDerived(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	l70 := mustModel(t, "llama-3.1-70b")
	if got := l70.WeightBytesTotal(); !near(got, 141.2e9) {
		t.Errorf("llama-3.1-70b weights = %v, want 141.2e9", got)
	}
	l8 := mustModel(t, "llama-3.1-8b")
	tests := []struct {
		what      string
		got, want float64
	}{
		{"8b FLOPs/token", l8.FLOPsPerToken(), 2 * 8.03e9},
		{"8b attn/pair", l8.AttnFLOPsPerPair(), 4 * 32 * 32 * 128}, // 524288
		{"8b experts", l8.ExpertParams(), 0},
		{"8b shared", l8.SharedParams(), 8.03e9},
		{"ds attn/pair", mustModel(t, "deepseek-v3").AttnFLOPsPerPair(), 61 * 128 * (2*(128+64) + 2*128)},
		{"ds weights (fp8)", mustModel(t, "deepseek-v3").WeightBytesTotal(), 671e9},
		// Mixtral: p = (46.7−12.9)/(8−2) = 5.6333e9 per expert; 8p = 45.0667e9; shared = 1.6333e9.
		{"mixtral experts", mustModel(t, "mixtral-8x7b").ExpertParams(), 8 * (46.7e9 - 12.9e9) / 6},
		{"mixtral shared", mustModel(t, "mixtral-8x7b").SharedParams(), 46.7e9 - 8*(46.7e9-12.9e9)/6},
		{"mixtral each", mustModel(t, "mixtral-8x7b").ExpertParamsEach(), (46.7e9 - 12.9e9) / 6},
		{"mixtral FLOPs/token", mustModel(t, "mixtral-8x7b").FLOPsPerToken(), 25.8e9},
	}
	for _, tt := range tests {
		if !near(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.what, tt.got, tt.want)
		}
	}
	// Shared + k experts = active for every MoE model.
	for _, m := range Default().Models() {
		if m.Experts == 0 {
			continue
		}
		if got := m.SharedParams() + float64(m.ExpertsPerTok)*m.ExpertParamsEach(); !near(got, m.ParamsActive) {
			t.Errorf("%s: shared + k·expert = %v, active %v", m.Name, got, m.ParamsActive)
		}
	}
}

func TestCatalog(t *testing.T) {
	c := Default()
	want := []string{"codellama-34b", "deepseek-r1", "deepseek-v2-lite", "deepseek-v3", "glm-4.5", "gpt-oss-120b", "gpt-oss-20b",
		"kimi-k2", "llama-2-70b", "llama-2-7b", "llama-3.1-405b", "llama-3.1-70b", "llama-3.1-8b", "minimax-m2",
		"mixtral-8x7b", "opt-13b", "opt-66b", "qwen2.5-7b", "qwen3-14b", "qwen3-235b-a22b", "qwen3-30b-a3b"}
	var got []string
	for _, m := range c.Models() {
		got = append(got, m.Name)
		if m.Source == "" {
			t.Errorf("%s: no source", m.Name)
		}
		if _, err := m.Spec().Resolve(); err != nil {
			t.Errorf("%s: re-resolve: %v", m.Name, err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("models = %v\nwant %v", got, want)
	}
	if m, err := c.Model(" Llama-3.1-8B "); err != nil || m.Name != "llama-3.1-8b" {
		t.Errorf("case-insensitive lookup: %v, %v", m, err)
	}
	_, err := c.Model("llama-3-8b")
	if err == nil || !strings.Contains(err.Error(), `unknown model "llama-3-8b" (known: codellama-34b, deepseek-r1, deepseek-v2-lite, deepseek-v3,`) {
		t.Errorf("unknown model error = %v", err)
	}
	m, _ := c.Model("opt-13b")
	m.Layers = 1
	if again, _ := c.Model("opt-13b"); again.Layers != 40 {
		t.Error("Model returned a shared pointer")
	}
}

func TestMergeAddAndRoundTrip(t *testing.T) {
	user, err := Parse([]byte("models:\n  - {name: Tiny, layers: 2, hidden: 64, heads: 4, kv_heads: 2, intermediate: 128, vocab: 100, params_total: 1e6, max_context: 512, source: test}\n"), "u.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := Default().Merge(user)
	tiny, err := m.Model("tiny")
	if err != nil || tiny.HeadDim != 16 || tiny.ParamsActive != 1e6 || tiny.WeightBytes != 2 || tiny.Attention != AttentionGQA {
		t.Fatalf("tiny = %+v, %v", tiny, err)
	}
	if len(m.Models()) != 22 || len(Default().Models()) != 21 {
		t.Error("Merge sizes wrong")
	}
	tiny.Name = "Tiny2"
	m.AddModel(tiny)
	if _, err := m.Model("tiny2"); err != nil {
		t.Error(err)
	}
	data, err := Default().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(data, "out.yaml")
	if err != nil || !reflect.DeepEqual(again, Default()) {
		t.Errorf("round trip: %v\n%s", err, data)
	}
}

func TestParseErrors(t *testing.T) {
	base := "models:\n  - name: m\n    layers: 2\n    hidden: 64\n    heads: 4\n    kv_heads: 2\n" +
		"    intermediate: 128\n    vocab: 100\n    params_total: 1e6\n    max_context: 512\n    source: s\n"
	moe := "    experts: 4\n    experts_per_token: 2\n    params_active: 6e5\n"
	tests := []struct{ name, in, want string }{
		{"ok", base, ""},
		{"misspelt", strings.Replace(base, "kv_heads", "kv_haeds", 1), "m.yaml:6: field models[0].kv_haeds: unknown field (did you mean kv_heads?)"},
		{"heads % kv", strings.Replace(base, "kv_heads: 2", "kv_heads: 3", 1), "m.yaml:6: field models[0].kv_heads: heads (4) must be a multiple of kv_heads (3)"},
		{"zero layers", strings.Replace(base, "layers: 2", "layers: 0", 1), "m.yaml:3: field models[0].layers: must be positive"},
		{"active > total", base + "    params_active: 2e6\n", "m.yaml:12: field models[0].params_active: 2e+06 exceeds params_total"},
		{"dense active", base + "    params_active: 5e5\n", "field models[0].params_active: a dense model"},
		{"top-k > experts", base + "    experts: 4\n    experts_per_token: 5\n    params_active: 5e5\n", "m.yaml:13: field models[0].experts_per_token: want 1 to experts-1 (3), got 5"},
		{"moe needs active", base + "    experts: 4\n    experts_per_token: 1\n", "field models[0].params_active: must be positive"},
		{"moe inconsistent", base + "    experts: 4\n    experts_per_token: 2\n    params_active: 1e5\n", "field models[0].params_active: inconsistent"},
		{"bad attention", base + "    attention: mha\n", `m.yaml:12: field models[0].attention: want gqa or mla, got "mha"`},
		{"mla without rank", base + "    attention: mla\n    rope_dim: 64\n", "field models[0].kv_lora_rank: must be positive for attention: mla"},
		{"gqa with rank", base + "    kv_lora_rank: 512\n", "field models[0].kv_lora_rank: only for attention: mla"},
		{"sliding without window", base + "    sliding_layers: 1\n", "field models[0].sliding_window: set sliding_window and sliding_layers together"},
		{"too many sliding", base + "    sliding_layers: 3\n    sliding_window: 8\n", "field models[0].sliding_layers: want 0 to layers (2)"},
		{"head_dim needed", strings.Replace(base, "hidden: 64", "hidden: 66", 1), "field models[0].head_dim: must be positive"},
		{"no source", strings.Replace(base, "    source: s\n", "", 1), "field models[0].source: required"},
		{"duplicate", base + "  - {name: M, layers: 1, hidden: 4, heads: 1, kv_heads: 1, intermediate: 4, vocab: 4, params_total: 1, max_context: 1, source: s}\n",
			`m.yaml:12: field models[1].name: duplicate model "m"`},
		{"string params", strings.Replace(base, "1e6", "70.6B", 1), `m.yaml:9: field models[0].params_total: want a number, got "70.6B"`},
		{"empty", "", "m.yaml: empty document"},
		{"unknown dtype", base + "    weight_dtype: int4\n", `m.yaml:12: field models[0].weight_dtype: unknown dtype "int4" (want one of bf16, fp16, fp8, mxfp4, nvfp4)`},
		{"unknown kv dtype", base + "    kv_dtype: fp6\n", `field models[0].kv_dtype: unknown dtype "fp6"`},
		{"dtype and bytes", base + "    weight_dtype: fp8\n    weight_bytes: 1\n", "field models[0].weight_bytes: set weight_dtype or weight_bytes, not both"},
		{"kv dtype and bytes", base + "    kv_dtype: fp8\n    kv_bytes: 1\n", "field models[0].kv_bytes: set kv_dtype or kv_bytes, not both"},
		{"dense expert dtype", base + "    expert_dtype: mxfp4\n", "m.yaml:12: field models[0].expert_dtype: only for an MoE model"},
		{"bad expert dtype", base + moe + "    expert_dtype: fp3\n", `field models[0].expert_dtype: unknown dtype "fp3"`},
		{"dense layers on dense", base + "    dense_layers: 1\n", "m.yaml:12: field models[0].dense_layers: only for an MoE model"},
		{"shared on dense", base + "    shared_experts: 1\n", "m.yaml:12: field models[0].shared_experts: only for an MoE model"},
		{"dense layers > layers", base + moe + "    dense_layers: 3\n", "m.yaml:15: field models[0].dense_layers: 3 leaves no MoE layer: want 0 to layers-1 (1)"},
		{"negative shared", base + moe + "    shared_experts: -1\n", "field models[0].shared_experts: must not be negative"},
		{"moe ok", base + moe + "    dense_layers: 1\n    shared_experts: 2\n    weight_dtype: FP8\n    expert_dtype: nvfp4\n    kv_dtype: fp8\n", ""},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in), "m.yaml")
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var fe *strictyaml.FieldError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &fe) {
			t.Errorf("%s: error = %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// FuzzParse checks that Parse never panics, reports errors located, and
// accepts only models whose derived figures are finite and positive.
func FuzzParse(f *testing.F) {
	f.Add(string(embeddedCatalog))
	f.Add("models:\n  - {name: t, layers: 2, hidden: 64, heads: 4, kv_heads: 2, intermediate: 128, vocab: 100, params_total: 1e6, max_context: 512, source: s}\n")
	f.Add("models: [{name: x, attention: mla, kv_lora_rank: 1}]\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse([]byte(in), "f.yaml")
		if err != nil {
			var fe *strictyaml.FieldError
			if !errors.As(err, &fe) || fe.File != "f.yaml" {
				t.Fatalf("error %v (%T) not located", err, err)
			}
			return
		}
		for _, m := range c.Models() {
			kv, w := m.KVBytesPerTokenPerShard(3), m.WeightBytesTotal()
			if block := m.KVBlockBytesPerShard(3, 16); !(block > 0) || !(block <= 16*kv) {
				t.Fatalf("%s: block of 16 tokens %v B, %v B per token", m.Name, block, kv)
			}
			if !(kv > 0) || !(w > 0) || m.SharedParams() < 0 {
				t.Fatalf("%s: kv %v weights %v shared %v", m.Name, kv, w, m.SharedParams())
			}
		}
	})
}

// TestCheckTP checks vLLM's sharding rules on the catalog's head counts:
// heads divisible by tp; kv_heads divisible by tp below kv_heads, tp
// divisible by kv_heads from there.
func TestCheckTP(t *testing.T) {
	tests := []struct {
		name  string
		legal []int // every legal tp up to 16
	}{
		{"llama-3.1-8b", []int{1, 2, 4, 8, 16}},     // 32 heads, 8 KV heads
		{"qwen2.5-7b", []int{1, 2, 4}},              // 28 heads, 4 KV heads: 7 and 14 divide the heads, not the KV heads
		{"opt-13b", []int{1, 2, 4, 5, 8, 10}},       // 40 heads = 40 KV heads (MHA)
		{"opt-66b", []int{1, 2, 3, 4, 6, 8, 9, 12}}, // 72 heads (MHA)
		{"deepseek-v3", []int{1, 2, 4, 8, 16}},      // MLA: 128 heads, the latent replicated
		{"qwen3-30b-a3b", []int{1, 2, 4, 8, 16}},    // 32 heads, 4 KV heads
		{"kimi-k2", []int{1, 2, 4, 8, 16}},          // MLA: 64 heads
		{"glm-4.5", []int{1, 2, 4, 8, 16}},          // 96 heads, 8 KV heads: 3, 6, 12 split the heads, not the KV heads
		{"minimax-m2", []int{1, 2, 4, 8, 16}},       // 48 heads, 8 KV heads
	}
	for _, tt := range tests {
		m := mustModel(t, tt.name)
		if got := m.LegalTPs(16); !slices.Equal(got, tt.legal) {
			t.Errorf("%s: legal tp %v, want %v", tt.name, got, tt.legal)
		}
		for tp := 1; tp <= 16; tp++ {
			if err := m.CheckTP(tp); (err == nil) != slices.Contains(tt.legal, tp) {
				t.Errorf("%s tp %d: CheckTP = %v", tt.name, tp, err)
			}
		}
	}
	// vLLM's MLA backends pad a rank's query heads (CUTLASS MLA to 128), so
	// one head per rank is legal: no minimum beyond divisibility.
	if err := mustModel(t, "deepseek-v3").CheckTP(128); err != nil {
		t.Errorf("deepseek-v3 tp 128 (one head per rank): %v", err)
	}
	want := "llama-3.1-8b's 32 attention heads do not split evenly over 3 ranks (vLLM requires heads divisible by tp; legal tp: 1, 2, 4, 8, 16, 32)"
	if err := mustModel(t, "llama-3.1-8b").CheckTP(3); err == nil || err.Error() != want {
		t.Errorf("llama-3.1-8b tp 3: %v\nwant %s", err, want)
	}
	q := mustModel(t, "qwen2.5-7b")
	if err := q.CheckTP(14); err == nil || !strings.Contains(err.Error(), "qwen2.5-7b's 4 KV heads neither split evenly over 14 ranks") {
		t.Errorf("qwen2.5-7b tp 14: %v", err)
	}
}

// TestAttentionKind names MHA, MQA, GQA and MLA models by their heads.
func TestAttentionKind(t *testing.T) {
	for name, want := range map[string]string{"llama-2-7b": "mha", "opt-66b": "mha", "llama-3.1-8b": "gqa",
		"deepseek-v3": "mla", "gpt-oss-120b": "gqa"} {
		if got := mustModel(t, name).AttentionKind(); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	mqa := mustModel(t, "llama-3.1-8b")
	mqa.KVHeads = 1
	if got := mqa.AttentionKind(); got != "mqa" {
		t.Errorf("one KV head: %s, want mqa", got)
	}
}
