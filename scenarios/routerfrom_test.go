package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"handoff/sim"
)

// eppInline is each shipped EndpointPickerConfig's llmd section written
// out by hand.
var eppInline = map[string]string{
	"epp/precise-prefix.yaml": "{scorers: [{name: precise-prefix-cache, weight: 2}, {name: kv-cache-utilization, weight: 1}, " +
		"{name: queue, weight: 1}], picker: max-score}",
	"epp/pd.yaml": "{scorers: [{name: prefix-cache, weight: 2}, {name: queue, weight: 1}], picker: max-score, " +
		"non_cached_tokens: 16, lru_capacity_per_server: 31250}",
	"testdata/epp-every-plugin.yaml": "{scorers: [{name: prefix-cache, weight: 3}, {name: precise-prefix-cache, weight: 0.5}, " +
		"{name: kv-cache-utilization}, {name: queue, weight: 2}, {name: load-aware, weight: 1.5}, {name: active-request}, " +
		"{name: running-requests, weight: 2}, {name: no-hit-lru, weight: 4}, {name: token-load, weight: 2.5}, {name: session-affinity, weight: 5}, {name: context-length-aware, weight: 1.5}], " +
		"context_length_filter: true, picker: weighted-random, " +
		"prefix_affinity_filter: {affinity_threshold: 0.5, exploration_probability: 0.1}, non_cached_tokens: 200, " +
		"lru_capacity_per_server: 64, no_hit_lru_size: 3, token_load_threshold: 20000}",
}

// routerFromDoc is a small P/D cluster on shared prompts, so prefixes hit
// and the decider sends some prefills away and keeps others; ROUTER is
// the router block's last line.
const routerFromDoc = `name: f
model: llama-3.1-8b
slo: {ttft: 2s, tpot: 100ms}
workload:
  shared_prefix: {num_unique_system_prompts: 3, num_users_per_system_prompt: 4, system_prompt_len: 700,
    question_len: 300, output_len: 60, stages: [{duration: 3s, rate: 30/s}]}
pools:
  - {name: prefill, role: prefill, count: 2, hardware: h100-sxm, context_length_range: [0, 100000]}
  - {name: decode, role: decode, count: 3, hardware: h100-sxm, context_length_range: [900, 1100]}
router:
  policy: llmd
  ROUTER
`

// TestRouterFromRunsAsInline (metamorphic): a scenario reading an
// EndpointPickerConfig with router.from runs exactly as the same scorers,
// picker and thresholds written inline.
func TestRouterFromRunsAsInline(t *testing.T) {
	for file, inline := range eppInline {
		runs := [2]*sim.Result{}
		for k, line := range []string{"from: " + file, "llmd: " + inline} {
			_, b, err := parseBuild(t, strings.Replace(routerFromDoc, "ROUTER", line, 1), "f.yaml")
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if runs[k], err = sim.Run(b.Config); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		}
		if !sameRun(runs[0], runs[1]) {
			t.Errorf("%s: the run differs from the inline section's", file)
		}
	}
}

// TestRouterFromShippedScenario: the shipped scenario reads the guide's
// config as the inline section it names; --set router.from switches the
// file, and --set into router.llmd is refused (one or the other).
func TestRouterFromShippedScenario(t *testing.T) {
	l, err := Load("router-llmd-epp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("router-llmd-epp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inline := strings.Replace(string(doc), "from: epp/precise-prefix.yaml", "llmd: "+eppInline["epp/precise-prefix.yaml"], 1)
	want, err := Parse([]byte(inline), "router-llmd-epp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Router.LLMD, want.Router.LLMD) || l.Router.Policy != "llmd" {
		t.Fatalf("imported %+v, want %+v", *l.Router.LLMD, *want.Router.LLMD)
	}
	pd, err := Load("router-llmd-epp.yaml", Set{Path: "router.from", Value: "epp/pd.yaml"})
	if err != nil || pd.Router.LLMD.NonCachedTokens != 16 {
		t.Fatalf("--set router.from=epp/pd.yaml: %v", err)
	}
	_, err = Load("router-llmd-epp.yaml", Set{Path: "router.llmd.picker", Value: "weighted-random"})
	if err == nil || !strings.Contains(err.Error(), "router.from sets the llmd section") {
		t.Fatalf("--set router.llmd.picker with router.from: %v", err)
	}
}

// TestRouterFromBadInput: each error names the file, the line and the
// field, plugin or parameter.
func TestRouterFromBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("epp/pd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, epp, router, want string }{
		{"unknown plugin", strings.Replace(string(good), "- type: queue-scorer", "- type: lora-affinity-scorer", 1), "",
			`epp.yaml:13: field plugins[1].type: plugin type "lora-affinity-scorer" is not modelled by handoff (handoff models no LoRA adapters); it models: active-request-scorer,`},
		{"latency scorer", strings.Replace(string(good), "- type: queue-scorer", "- type: latency-scorer", 1), "",
			`epp.yaml:13: field plugins[1].type: plugin type "latency-scorer" is not modelled by handoff (it reads a latency predictor`},
		{"filtering not a bool", strings.Replace(string(good), "- type: queue-scorer", "- type: context-length-aware\n  parameters: {enableFiltering: yes please}", 1), "",
			`epp.yaml:14: field plugins[1].parameters.enableFiltering: must be true or false, got "yes please"`},
		{"unlisted plugin", strings.Replace(string(good), "- type: queue-scorer", "- type: my-scorer", 1), "",
			`epp.yaml:13: field plugins[1].type: plugin type "my-scorer" is not modelled by handoff; it models: active-request-scorer,`},
		{"missing pluginRef", strings.Replace(string(good), "  - pluginRef: queue-scorer\n    weight: 1\n- name: decode",
			"  - weight: 1\n- name: decode", 1), "", "epp.yaml:31: field schedulingProfiles[0].plugins[3].pluginRef: is required"},
		{"unknown reference", strings.Replace(string(good), "pluginRef: prefill-filter", "pluginRef: prefil-filter", 1), "",
			`epp.yaml:27: field schedulingProfiles[0].plugins[0].pluginRef: no plugin named "prefil-filter"`},
		{"unknown parameter", strings.Replace(string(good), "nonCachedTokens: 16", "cacheHitThreshold: 16", 1), "",
			`epp.yaml:19: field plugins[5].parameters.cacheHitThreshold: parameter "cacheHitThreshold" of prefix-based-pd-decider is not modelled`},
		{"profiles differ", strings.Replace(string(good), "    weight: 1\n- name: decode", "    weight: 3\n- name: decode", 1), "",
			`epp.yaml:34: field schedulingProfiles[1].plugins: profile "decode" scores, filters or picks unlike profile "prefill"`},
		{"top-level key", string(good) + "flowControl: {}\n", "", `epp.yaml:41: field flowControl: unknown field`},
		{"both", string(good), "\n  llmd: {picker: max-score}", "f.yaml:13: field router.llmd: router.from sets the llmd section"},
		{"no file", "", "", "f.yaml:12: field router.from: open"},
	}
	for _, tc := range tests {
		path := filepath.Join(dir, "epp.yaml")
		os.Remove(path)
		if tc.epp != "" {
			if err := os.WriteFile(path, []byte(tc.epp), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		doc := strings.Replace(routerFromDoc, "ROUTER", "from: epp.yaml"+tc.router, 1)
		_, err := Parse([]byte(doc), filepath.Join(dir, "f.yaml"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: got %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
}
