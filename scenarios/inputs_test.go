package scenarios

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInputs lists what Build opens, for every kind of input a scenario
// names: each path resolved once, and every one of them there to open.
func TestInputs(t *testing.T) {
	cascade, err := Load("decode-cascade.yaml", Set{Path: "pools.prefill.step_time",
		Value: "{model: polynomial, file: profiles/distserve/profiler-a100-80g.distserve.json, profile_model: facebook/opt-13b}"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		l    *Loaded
		want []string
	}{
		{"servegen and a step-time file", cascade, []string{"traces/servegen-r1/chunk-0-trace.csv",
			"traces/servegen-r1/chunk-0-dataset.json", "profiles/distserve/profiler-a100-80g.distserve.json"}},
		{"trace", loadForInputs(t, "testdata/trace.yaml"), nil},
		{"catalog file", loadForInputs(t, "testdata/with-catalog.yaml"), []string{"testdata/catalog/tiny.yaml"}},
		{"synthetic", loadForInputs(t, "quickstart.yaml"), nil},
		{"model config", loadForInputs(t, "config-json-model.yaml"), []string{"models/qwen3-32b.config.json"}},
		{"catalog configs", loadForInputs(t, "testdata/config-catalog.yaml"),
			[]string{"testdata/catalog/hf.yaml", "testdata/hf/llama-3.1-8b-instruct.config.json"}},
	}
	for _, tt := range tests {
		got := tt.l.Inputs()
		if tt.want != nil && !slices.Equal(got, tt.want) {
			t.Errorf("%s: inputs %q, want %q", tt.name, got, tt.want)
		}
		for _, p := range got {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: input %s: %v", tt.name, p, err)
			}
		}
	}
	if got := loadForInputs(t, "testdata/trace.yaml").Inputs(); len(got) != 1 || filepath.Dir(got[0]) == "." {
		t.Errorf("trace scenario: inputs %q, want its one trace, resolved from its folder", got)
	}
}

func loadForInputs(t *testing.T, path string) *Loaded {
	t.Helper()
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
