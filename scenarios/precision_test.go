package scenarios

import (
	"strings"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
)

// TestPrecisionRefusals: each bad precision names its field.
func TestPrecisionRefusals(t *testing.T) {
	for decode, want := range map[string]string{
		"tp: 8, precision: {compute: fp4}":  "pools[1].precision.compute: h200 has no fp4 tensor cores",
		"tp: 8, precision: {compute: int4}": "pools[1].precision.compute: unknown format \"int4\"",
		"tp: 8, precision: {weights: int4}": "pools[1].precision.weights: unknown dtype \"int4\"",
		"tp: 8, precision: {kv: fp8}":       "pools[1].precision.kv: fp8 KV beside bf16 at pools[0].precision.kv",
	} {
		_, _, err := parseBuild(t, moeScenario(decode), "m.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", decode, err, want)
		}
	}
	dense := strings.Replace(moeScenario("tp: 8, precision: {experts: fp8}"), "qwen3-235b-a22b", "llama-3.1-70b", 1)
	if _, _, err := parseBuild(t, dense, "m.yaml"); err == nil || !strings.Contains(err.Error(),
		"pools[1].precision.experts: llama-3.1-70b is dense") {
		t.Errorf("experts on a dense model: error %v", err)
	}
	both := strings.Replace(moeScenario("tp: 8, precision: {kv: fp8}"), "tp: 8}", "tp: 8, precision: {kv: fp8}}", 1)
	if _, _, err := parseBuild(t, both, "m.yaml"); err != nil {
		t.Errorf("fp8 KV on both sides: %v", err)
	}
}

// TestDefaultCompute: without a compute format a pool computes in the
// narrowest of its weights' formats the device has tensor cores for.
func TestDefaultCompute(t *testing.T) {
	hw, models := hardware.Default(), llm.Default()
	for _, c := range []struct{ model, device, want string }{
		{"gpt-oss-120b", "h100-sxm", "bf16"}, // MXFP4 experts unpacked: Hopper has no FP4
		{"gpt-oss-120b", "b200", "fp4"},
		{"deepseek-v3", "h200", "fp8"},
		{"deepseek-v3", "a100-80gb", "bf16"}, // FP8 weights unpacked: Ampere has no FP8
		{"llama-3.1-8b", "b200", "bf16"},
	} {
		m, _ := models.Model(c.model)
		dev, _ := hw.Accelerator(c.device)
		got, err := (&Loaded{}).computeFormat("pools[0]", "", dev, m)
		if err != nil || got != c.want {
			t.Errorf("%s on %s: compute %q (%v), want %q", c.model, c.device, got, err, c.want)
		}
	}
}
