package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelFromConfig builds the shipped scenario whose model field names
// a config.json: the model is read from it, named after the file.
func TestModelFromConfig(t *testing.T) {
	l, err := Load("config-json-model.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := b.Model
	if m.Name != "qwen3-32b" || m.Layers != 64 || m.KVHeads != 8 || m.HeadDim != 128 || m.KVBytesPerToken() != 262144 {
		t.Errorf("model %+v", m)
	}
	if m.ParamsTotal < 32.7e9 || m.ParamsTotal > 32.8e9 || !strings.Contains(m.Source, "qwen3-32b.config.json (Qwen3ForCausalLM") {
		t.Errorf("params %v, source %q", m.ParamsTotal, m.Source)
	}
}

// TestCatalogModelFromConfig builds models that catalog entries read from
// configs: inline (the path against the scenario's folder) and in a
// catalog file (against the file's), the same config each time.
func TestCatalogModelFromConfig(t *testing.T) {
	for _, tt := range []struct {
		model, source string
	}{
		{"llama-inline", "the shared data's copy"},
		{"llama-3.1-8b-instruct", "testdata/hf/llama-3.1-8b-instruct.config.json (LlamaForCausalLM;"},
	} {
		l, err := Load("testdata/config-catalog.yaml", Set{Path: "model", Value: tt.model})
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Build()
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		b.Close()
		_, models := builtin()
		want, err := models.Model("llama-3.1-8b")
		if err != nil {
			t.Fatal(err)
		}
		if m := b.Model; m.Name != tt.model || m.KVBytesPerToken() != want.KVBytesPerToken() || !strings.HasPrefix(m.Source, tt.source) {
			t.Errorf("%s: %s, %q", tt.model, m.Name, m.Source)
		}
	}
}

// TestModelConfigErrors checks that a config the reader refuses is one
// error naming the scenario's field and the config file's key.
func TestModelConfigErrors(t *testing.T) {
	dir := t.TempDir()
	llama, err := os.ReadFile("testdata/hf/llama-3.1-8b-instruct.config.json")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, old, new string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(llama), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	falcon := write("falcon.config.json", "LlamaForCausalLM", "FalconForCausalLM")
	noLayers := write("nolayers.json", `"num_hidden_layers": 32,`, "")
	tests := []struct{ name, model, catalog, want string }{
		{"missing file", "models/none.config.json", "", "m.yaml:2: field model: open models/none.config.json: no such file"},
		{"architecture", falcon, "", "m.yaml:2: field model: " + falcon + `: architectures: "FalconForCausalLM" is not an architecture handoff reads`},
		{"entry's missing key", "x", "  models: [{name: x, config: " + noLayers + "}]\n",
			"m.yaml:14: field catalog.models[0].config: " + noLayers + ": num_hidden_layers: missing"},
		{"entry sets a field", "x", "  models: [{name: x, config: " + falcon + ", layers: 2}]\n",
			"m.yaml:14: field catalog.models[0].layers: the config file " + falcon + " sets the model's shape: drop layers"},
	}
	for _, tt := range tests {
		doc := strings.Replace(minimal, "model: llama-3.1-8b", "model: "+tt.model, 1)
		if tt.catalog != "" {
			doc += "catalog:\n" + tt.catalog
		}
		_, _, err := parseBuild(t, doc, "m.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v\nwant it to start %q", tt.name, err, tt.want)
		}
	}
}

func TestConfigName(t *testing.T) {
	for path, want := range map[string]string{
		"models/qwen3-32b.config.json": "qwen3-32b", "Qwen3-32B/config.json": "qwen3-32b", "/a/b/My Model.JSON": "my-model",
		"x.json": "x",
	} {
		if got := configName(path); got != want {
			t.Errorf("configName(%q) = %q, want %q", path, got, want)
		}
	}
}
