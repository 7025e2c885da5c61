package llm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedConfigs is the shared data's folder of Hugging Face configs.
const sharedConfigs = "../../../shared/data/catalog/hf-configs/"

// catalogConfigs pairs each config of a catalog model with its entry, and
// says how far the counted parameters may lie from the entry's: 0.5%
// unless why says otherwise (the catalog's figure is then a model card's).
var catalogConfigs = []struct {
	file, model         string
	totalTol, activeTol float64 // relative
	why                 string
}{
	{sharedConfigs + "deepseek-v2-lite.config.json", "deepseek-v2-lite", 0.005, 0.005, ""},
	{sharedConfigs + "llama-3.1-8b-instruct.config.json", "llama-3.1-8b", 0.005, 0.005, ""},
	{sharedConfigs + "llama-3.1-70b-instruct.config.json", "llama-3.1-70b", 0.005, 0.005, ""},
	{sharedConfigs + "mixtral-8x7b-v0.1.config.json", "mixtral-8x7b", 0.005, 0.005, ""},
	{sharedConfigs + "qwen2.5-7b-instruct.config.json", "qwen2.5-7b", 0.005, 0.005, ""},
	{sharedConfigs + "qwen3-14b.config.json", "qwen3-14b", 0.005, 0.005, ""},
	{sharedConfigs + "qwen3-30b-a3b.config.json", "qwen3-30b-a3b", 0.005, 0.02,
		"active: the catalog's 3.3e9 is the card's rounded figure; counted 3.35e9"},
	{"testdata/hf-configs/qwen3-235b-a22b.config.json", "qwen3-235b-a22b", 0.005, 0.01,
		"active: the catalog's 22e9 is the card's rounded figure; counted 22.19e9"},
	{"testdata/hf-configs/deepseek-v3.config.json", "deepseek-v3", 0.005, 0.02,
		"active: the catalog's 37e9 is the card's; counted 37.55e9, the 1.85e9 of embeddings and lm_head included"},
	{"testdata/hf-configs/kimi-k2.config.json", "kimi-k2", 0.005, 0.005, ""},
	{"testdata/hf-configs/glm-4.5.config.json", "glm-4.5", 0.01, 0.06,
		"the catalog's 355e9 / 32e9 are the card's: its total holds the multi-token-prediction layer vLLM does " +
			"not serve (counted 352.8e9 without it), its active leaves the 1.55e9 of embeddings out (counted 33.63e9 with them)"},
	{"testdata/hf-configs/gpt-oss-120b.config.json", "gpt-oss-120b", 0.005, 0.005, ""},
	{"testdata/hf-configs/gpt-oss-20b.config.json", "gpt-oss-20b", 0.005, 0.005, ""},
}

// TestHFConfigsMatchCatalog reads each catalog model's config.json and
// checks the entry it makes against the catalog's: every architecture
// field (layers, heads, KV heads, head width, hidden, experts, top-k,
// widths, MLA ranks, sliding layers, dense and shared layers, formats,
// context) equal, so the KV bytes per token agree, and the parameter
// counts within the stated tolerance.
func TestHFConfigsMatchCatalog(t *testing.T) {
	for _, tt := range catalogConfigs {
		data, err := os.ReadFile(tt.file)
		if errors.Is(err, os.ErrNotExist) && strings.HasPrefix(tt.file, sharedConfigs) {
			t.Logf("%s: shared data not available", tt.file)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadHFConfig(data, tt.file, tt.model)
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		want := mustModel(t, tt.model)
		if got.KVBytesPerToken() != want.KVBytesPerToken() {
			t.Errorf("%s: KV bytes per token %v, catalog %v", tt.model, got.KVBytesPerToken(), want.KVBytesPerToken())
		}
		gs, ws := shapeOnly(got.Spec()), shapeOnly(want.Spec())
		if gs != ws {
			t.Errorf("%s:\nconfig  %+v\ncatalog %+v", tt.model, gs, ws)
		}
		checkNear(t, tt.model+" params_total", got.ParamsTotal, want.ParamsTotal, tt.totalTol, tt.why)
		checkNear(t, tt.model+" params_active", got.ParamsActive, want.ParamsActive, tt.activeTol, tt.why)
	}
}

// shapeOnly is s without its parameter counts and source.
func shapeOnly(s Spec) Spec {
	s.ParamsTotal, s.ParamsActive, s.Source = 0, 0, ""
	return s
}

func checkNear(t *testing.T, what string, got, want, tol float64, why string) {
	t.Helper()
	if d := math.Abs(got/want - 1); d > tol {
		t.Errorf("%s: counted %.5g, catalog %.5g (%.2f%% apart, tolerance %.1f%%; %s)", what, got, want, 100*d, 100*tol, why)
	}
}

// TestHFParamsByHand checks the counts of two configs against sums done
// by hand from the formula in hfparams.go.
func TestHFParamsByHand(t *testing.T) {
	// Llama-3.1-8B: embeddings 2·128256·4096; per layer q and o 2·4096²,
	// k and v 2·4096·1024, MLP 3·4096·14336, norms 2·4096; final norm.
	llama := 2*128256*4096.0 + 32*(2*4096*4096.0+2*4096*1024+3*4096*14336+2*4096) + 4096
	// DeepSeek-V2-Lite (no q LoRA): per layer q 2048·16·192, kv_a
	// 2048·576 + 512, kv_b 512·16·256, o 16·128·2048, norms 2·2048;
	// layer 0 dense 3·2048·10944; 26 MoE layers of 64 routed and 2 shared
	// experts 3·2048·1408 each and a router 2048·64; untied embeddings.
	attn := 2048*16*192.0 + 2048*576 + 512 + 512*16*256 + 16*128*2048 + 2*2048
	expert := 3 * 2048 * 1408.0
	base := 2*102400*2048.0 + 27*attn + 2048 + 3*2048*10944 + 26*(2*expert+2048*64)
	for _, tt := range []struct {
		file, model   string
		total, active float64
	}{
		{sharedConfigs + "llama-3.1-8b-instruct.config.json", "llama-3.1-8b", llama, llama},
		{sharedConfigs + "deepseek-v2-lite.config.json", "deepseek-v2-lite", base + 26*64*expert, base + 26*6*expert},
	} {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Skip("shared data not available:", err)
		}
		m, err := ReadHFConfig(data, tt.file, tt.model)
		if err != nil {
			t.Fatal(err)
		}
		if m.ParamsTotal != tt.total || m.ParamsActive != tt.active {
			t.Errorf("%s: counted %v / %v, by hand %v / %v", tt.model, m.ParamsTotal, m.ParamsActive, tt.total, tt.active)
		}
	}
}

// TestHFConfigErrors checks that each kind of bad config is one error
// naming the file and the JSON path.
func TestHFConfigErrors(t *testing.T) {
	qwen3, err := os.ReadFile("testdata/hf-configs/qwen3-235b-a22b.config.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(oldNew ...string) string { return strings.NewReplacer(oldNew...).Replace(string(qwen3)) }
	tests := []struct{ name, data, want string }{
		{"not json", "{", "c.json: not a JSON object"},
		{"no architectures", `{"hidden_size": 1}`, "c.json: architectures: missing"},
		{"unknown architecture", edit("Qwen3MoeForCausalLM", "FalconForCausalLM"),
			`c.json: architectures: "FalconForCausalLM" is not an architecture handoff reads (it reads LlamaForCausalLM,`},
		{"missing key", edit(`"num_hidden_layers": 94,`, ""), "c.json: num_hidden_layers: missing"},
		{"wrong type", edit(`"hidden_size": 4096`, `"hidden_size": "4096"`), "c.json: hidden_size: want an integer, got a string"},
		{"fraction", edit(`"num_experts": 128`, `"num_experts": 12.5`), "c.json: num_experts: want an integer in [0, 16777216], got 12.5"},
		{"top-k", edit(`"num_experts_per_tok": 8`, `"num_experts_per_tok": 128`), "c.json: num_experts_per_tok: want 1 to num_experts-1 (127), got 128"},
		{"dtype", edit(`"torch_dtype": "bfloat16"`, `"torch_dtype": "int8"`), `c.json: torch_dtype: "int8" is not a dtype handoff reads`},
		{"quantization", edit(`"vocab_size"`, `"quantization_config": {"quant_method": "gptq", "bits": 4}, "vocab_size"`),
			`c.json: quantization_config.quant_method: "gptq" is not a format handoff reads`},
		{"int4", edit(`"vocab_size"`, `"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}}, "vocab_size"`),
			`c.json: quantization_config.config_groups.group_0.weights.type: "int": handoff reads floating-point schemes`},
		{"mlp-only list", edit(`"mlp_only_layers": []`, `"mlp_only_layers": ["a"]`), "c.json: mlp_only_layers[0]: want an integer, got a string"},
		{"layer types", edit(`"mlp_only_layers"`, `"layer_types": ["full_attention"], "mlp_only_layers"`), "c.json: layer_types: 1 entries for num_hidden_layers 94"},
		{"every layer slides", edit(`"use_sliding_window": false`, `"use_sliding_window": true`,
			`"sliding_window": null`, `"sliding_window": 4096`, `"max_window_layers": 94`, `"max_window_layers": 0`),
			"c.json: max_window_layers: every layer slides"},
	}
	for _, tt := range tests {
		_, err := ReadHFConfig([]byte(tt.data), "c.json", "x")
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want it to start %q", tt.name, err, tt.want)
		}
	}
}

// TestHFConfigVariants reads what the catalog's configs do not show: an
// fp8 and an NVFP4 checkpoint, a float32 config, a Mistral sliding window,
// Qwen2-MoE's shared expert and Qwen's sliding layers.
func TestHFConfigVariants(t *testing.T) {
	qwen3, err := os.ReadFile("testdata/hf-configs/qwen3-235b-a22b.config.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(oldNew ...string) []byte { return []byte(strings.NewReplacer(oldNew...).Replace(string(qwen3))) }
	m, err := ReadHFConfig(edit(`"vocab_size"`, `"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}, "vocab_size"`), "c.json", "q")
	if err != nil || m.WeightDType != NVFP4 || m.ExpertDType != NVFP4 || m.KVDType != FP8 {
		t.Errorf("modelopt NVFP4: %v, %v", m, err)
	}
	m, err = ReadHFConfig(edit(`"torch_dtype": "bfloat16"`, `"dtype": "float32"`), "c.json", "q")
	if err != nil || m.WeightDType != BF16 || m.KVDType != BF16 {
		t.Errorf("float32 is served at bf16: %v, %v", m, err)
	}
	m, err = ReadHFConfig(edit(`"use_sliding_window": false`, `"use_sliding_window": true`,
		`"sliding_window": null`, `"sliding_window": 4096`, `"max_window_layers": 94`, `"max_window_layers": 28`), "c.json", "q")
	if err != nil || m.SlidingLayers != 94-28 || m.SlidingWindow != 4096 {
		t.Errorf("Qwen sliding layers: %v, %v", m, err)
	}
	mistral := `{"architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
		"max_position_embeddings": 32768, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
		"sliding_window": 4096, "vocab_size": 32000}`
	if _, err := ReadHFConfig([]byte(mistral), "m.json", "m"); err == nil || !strings.HasPrefix(err.Error(), "m.json: sliding_window: 4096: every layer") {
		t.Errorf("Mistral's every-layer window: %v", err)
	}
	// Qwen1.5-MoE-A2.7B's shape: 60 experts top-4 of width 1408 and a
	// shared expert of 5632 (four experts' width) behind a gate.
	qwen2moe := `{"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 5632,
		"max_position_embeddings": 8192, "moe_intermediate_size": 1408, "num_attention_heads": 16, "num_experts": 60,
		"num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 16, "shared_expert_intermediate_size": 5632,
		"tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 151936}`
	m, err = ReadHFConfig([]byte(qwen2moe), "q.json", "q")
	if err != nil || m.SharedExperts != 4 || m.DenseLayers != 0 || math.Abs(m.ParamsTotal/14.3e9-1) > 0.01 ||
		math.Abs(m.ParamsActive/2.7e9-1) > 0.03 {
		t.Errorf("Qwen2-MoE (card: 14.3B total, 2.7B active): %+v, %v", m, err)
	}
}

// FuzzReadHFConfig feeds arbitrary bytes to the reader: it returns a model
// or an error, never panics, and an error is one line naming the file.
func FuzzReadHFConfig(f *testing.F) {
	for _, dir := range []string{sharedConfigs, "testdata/hf-configs/"} {
		files, _ := filepath.Glob(dir + "*.json")
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1e9}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadHFConfig(data, "f.json", "fuzz")
		switch {
		case err != nil && (!strings.HasPrefix(err.Error(), "f.json: ") || strings.Contains(err.Error(), "\n")):
			t.Fatalf("error %q: want one line naming the file", err)
		case err == nil && (m.ParamsTotal <= 0 || m.KVBytesPerToken() <= 0):
			t.Fatalf("model %+v without parameters or KV", m)
		}
	})
}

// TestSpecConfigOnly checks that an entry read from a config sets nothing
// else, and that Resolve leaves reading the file to the catalog's loader.
func TestSpecConfigOnly(t *testing.T) {
	if err := (Spec{Name: "x", Config: "c.json", Source: "s"}).ConfigOnly(); err != nil {
		t.Errorf("name, config and source: %v", err)
	}
	err := Spec{Name: "x", Config: "c.json", Layers: 4}.ConfigOnly()
	if err == nil || !strings.Contains(err.Error(), "field layers: the config file c.json sets the model's shape: drop layers") {
		t.Errorf("layers beside config: %v", err)
	}
	if _, err := (Spec{Name: "x", Config: "c.json"}).Resolve(); err == nil || !strings.Contains(err.Error(), "field config:") {
		t.Errorf("Resolve with config: %v", err)
	}
}
