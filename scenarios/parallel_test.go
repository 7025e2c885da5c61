package scenarios

import (
	"strings"
	"testing"

	"handoff/models/perf"
)

// moePools is a P/D scenario of qwen3-235b-a22b whose decode pool takes
// the layout under test.
func moeScenario(decode string) string {
	return `name: m
model: qwen3-235b-a22b
slo: {ttft: 1s, tpot: 100ms}
workload:
  synthetic:
    requests: 20
    arrival: {process: constant, rate: 5/s}
    input_tokens: {dist: fixed, value: 500}
    output_tokens: {dist: fixed, value: 20}
pools:
  - {name: prefill, role: prefill, hardware: h200, tp: 8}
  - {name: decode, role: decode, hardware: h200, ` + decode + `}
link: {kind: nvlink4}
`
}

// TestDataParallelRanks: a dp pool is count × dp instances, one per rank,
// each of tp devices, stepping as one group.
func TestDataParallelRanks(t *testing.T) {
	_, b, err := parseBuild(t, moeScenario("count: 2, tp: 1, dp: 8, ep: 8"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range b.Config.Instances[1:] {
		names = append(names, in.Name)
		if in.GPUs != 1 || in.DPRanks != 8 || !isGroupTimer(in.Timer) || !in.DPBalance {
			t.Errorf("%s: gpus %d, ranks %d, group timer %v, balanced %v", in.Name, in.GPUs, in.DPRanks,
				isGroupTimer(in.Timer), in.DPBalance)
		}
	}
	if len(names) != 16 || names[0] != "decode-0-dp0" || names[7] != "decode-0-dp7" || names[8] != "decode-1-dp0" {
		t.Errorf("decode ranks %v", names)
	}
	if b.GPUs != 8+2*8 {
		t.Errorf("gpus = %d, want 24", b.GPUs)
	}
}

// TestParallelRefusals: each refused layout names its field.
func TestParallelRefusals(t *testing.T) {
	for decode, want := range map[string]string{
		"tp: 1, dp: 3, ep: 3":                   "pools[1].ep: ep 3 does not divide qwen3-235b-a22b's 128 routed experts",
		"tp: 2, dp: 4":                          "pools[1].ep: dp 4 needs ep = dp × tp = 8",
		"tp: 2, dp: 4, ep: 4":                   "pools[1].ep: ep 4 must equal dp × tp = 8",
		"tp: 1, dp: 0":                          "pools[1].dp: must be in [1, 1024], got 0",
		"tp: 1, dp: 8, ep: 8, dp_routing: rank": "pools[1].dp_routing: unknown \"rank\"",
		"tp: 1, dp: 8, ep: 8, preemption: swap, swap: {host_memory: 1GB}": "pools[1].preemption: swap with dp > 1",
	} {
		_, _, err := parseBuild(t, moeScenario(decode), "m.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", decode, err, want)
		}
	}
	// An accelerator of 8-device domains without a scale-out NIC cannot
	// join 16 ranks.
	island := moeScenario("hardware: island, tp: 1, dp: 16, ep: 16") + `catalog:
  accelerators:
    - {name: island, kind: gpu, memory: 200GB, memory_bandwidth: 4TB/s, bf16: 900TFLOPS, mfu: 0.5, mbu: 0.8,
       step_overhead: 1ms, scale_up: nvlink4, scale_up_domain: 8, cost_per_hour: 1}
`
	island = strings.Replace(island, "hardware: h200, hardware: island", "hardware: island", 1)
	if _, _, err := parseBuild(t, island, "m.yaml"); err == nil || !strings.Contains(err.Error(),
		"pools[1].dp: dp × tp = 16 devices span more than one scale-up domain of island") {
		t.Errorf("dp 16 over 8-device domains without a NIC: error %v", err)
	}
	// With one (h200's cx7-400g) the group spans two domains.
	if _, _, err := parseBuild(t, moeScenario("tp: 1, dp: 16, ep: 16"), "m.yaml"); err != nil {
		t.Errorf("dp 16 on h200 over its scale-out NIC: %v", err)
	}
	dense := strings.Replace(moeScenario("tp: 1, dp: 2, ep: 2"), "qwen3-235b-a22b", "llama-3.1-70b", 1)
	if _, _, err := parseBuild(t, dense, "m.yaml"); err == nil || !strings.Contains(err.Error(), "pools[1].ep") ||
		!strings.Contains(err.Error(), "dense") {
		t.Errorf("dense dp: error %v", err)
	}
}

func isGroupTimer(t perf.StepTimer) bool { _, ok := t.(perf.GroupTimer); return ok }
