package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/models/engine"
	"handoff/models/perf"
)

// waferBase is GPU prefill → wafer decode for Llama-3.1-70B: 4 × H100 per
// prefiller, 4 × WSE-3 pipelined per decoder, CS-3 Ethernet between them.
// Its line numbers matter: the comment below gives them.
const waferBase = `name: w
model: llama-3.1-70b
slo: {ttft: 2s, tpot: 50ms}
workload:
  synthetic:
    requests: 1
    arrival: {process: poisson, rate: 1/s}
    input_tokens: {dist: fixed, value: 1000}
    output_tokens: {dist: fixed, value: 100}
link: {kind: cs3-ethernet}
pools:
  - name: prefill
    role: prefill
    hardware: h100-sxm
    tp: 4
  - name: decode
    role: decode
    hardware: wse-3
    wafer:
      wafers: 4
      slots: [{count: 12, context: 8192}]
`

// Lines of waferBase: 16 "- name: decode", 17 role, 18 hardware, 19 wafer,
// 20 wafers, 21 slots.

func waferEdit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(waferBase, old) {
		t.Fatalf("waferBase has no %q", old)
	}
	return strings.Replace(waferBase, old, new, 1)
}

// TestSlotsKVBytes: one Llama-3.1-70B token holds 2·80·8·128·2 = 327,680 B
// of KV, so a slot of 8,192 tokens holds 2,684,354,560 B and 12 of them
// 32,212,254,720 B.
func TestSlotsKVBytes(t *testing.T) {
	l, b, err := parseBuild(t, waferBase, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := slotsKVBytes(b.Model, l.Pools[1].Wafer.Slots); got != 32_212_254_720 {
		t.Errorf("12 slots of 8192 hold %v B, want 32,212,254,720", got)
	}
}

// TestWaferSlotFit: 4 wafers × 44 GB = 176 GB of SRAM − 141.2 GB of
// weights leave 34.8 GB for KV; at 2,684,354,560 B a slot of 8,192 tokens,
// 34.8e9 / 2.684e9 = 12.96: 12 slots fit, 13 (34,896,609,280 B) are
// 0.0966 GB over.
func TestWaferSlotFit(t *testing.T) {
	tests := []struct {
		slots string
		want  string // "" = builds
	}{
		{"[{count: 12, context: 8192}]", ""},
		{"[{count: 13, context: 8192}]", "t.yaml:21: field pools[1].wafer.slots: the slots need 34.90 GB of KV " +
			"but 4 wafers of wse-3 leave 34.80 GB of SRAM after llama-3.1-70b's 141.2 GB of weights: " +
			"over by 0.10 GB; at most 12 slots of 8192 tokens fit"},
		// 3 slots of 32k are 4 × 8k slots each: 12 slots' worth, fits; 4 do not.
		{"[{count: 3, context: 32768}]", ""},
		{"[{count: 4, context: 32768}]", "at most 3 slots of 32768 tokens fit"},
		// Two classes: 8 × 8k + 2 × 16k = 12 × 8k fits; one more 8k slot does not.
		{"[{count: 8, context: 8192}, {count: 2, context: 16384}]", ""},
		{"[{count: 9, context: 8192}, {count: 2, context: 16384}]", "over by 0.10 GB"},
	}
	for _, tc := range tests {
		_, _, err := parseBuild(t, waferEdit(t, "[{count: 12, context: 8192}]", tc.slots), "t.yaml")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.slots, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error = %v\nwant %s", tc.slots, err, tc.want)
		}
	}
}

func TestWaferErrors(t *testing.T) {
	const block = "    wafer:\n      wafers: 4\n      slots: [{count: 12, context: 8192}]\n"
	tests := []struct {
		name, doc, want string
	}{
		{"weights overflow", waferEdit(t, "wafers: 4", "wafers: 3"),
			"t.yaml:20: field pools[1].wafer.wafers: llama-3.1-70b's 141.2 GB of weights do not fit in 3 wafers of " +
				"wse-3 (132.0 GB of SRAM): over by 9.2 GB; at least 4 wafers are needed"},
		{"slot longer than the model", waferEdit(t, "context: 8192", "context: 200000"),
			"t.yaml:21: field pools[1].wafer.slots[0].context: 200000 tokens is longer than llama-3.1-70b's context of 131072"},
		{"context longer than any slot", waferEdit(t, "    hardware: wse-3\n", "    hardware: wse-3\n    engine: {max_model_len: 16384}\n"),
			"field pools[1].engine.max_model_len: 16384 tokens is longer than any slot (the longest holds 8192)"},
		{"recompile without layouts", waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: recompile\n      recompile_time: 30s"),
			"t.yaml:19: field pools[1].wafer.layouts: pressure_policy recompile needs at least one layout"},
		{"recompile without a pause", waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: recompile\n      layouts: [[{count: 3, context: 32768}]]"),
			"field pools[1].wafer.recompile_time: pressure_policy recompile needs a positive pause"},
		{"empty layout", waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: recompile\n      recompile_time: 30s\n      layouts: [[]]"),
			"t.yaml:23: field pools[1].wafer.layouts[0]: a layout needs at least one slot class"},
		{"layout too big", waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: recompile\n      recompile_time: 30s\n      layouts: [[{count: 4, context: 32768}]]"),
			"t.yaml:23: field pools[1].wafer.layouts[0]: the slots need 42.95 GB"},
		{"preemption recompute", waferEdit(t, "role: decode", "role: decode\n    preemption: recompute"),
			"t.yaml:18: field pools[1].preemption: a wafer has no paged KV pool, so nothing to preempt, swap or reject " +
				"mid-flight: drop preemption (and swap/reject) and choose wafer.pressure_policy: queue, reject or recompile"},
		{"preemption swap", waferEdit(t, "role: decode", "role: decode\n    preemption: swap\n    swap: {host_memory: 1TB}"),
			"field pools[1].preemption: a wafer has no paged KV pool"},
		{"no wafer block", strings.Replace(waferBase, block, "", 1),
			"t.yaml:18: field pools[1].hardware: wse-3 is a wafer (no paged KV pool): the pool needs a wafer block"},
		{"wafer block on a GPU", waferEdit(t, "hardware: wse-3", "hardware: h100-sxm"),
			"t.yaml:19: field pools[1].wafer: applies to wafer hardware only; h100-sxm is kind gpu"},
		{"no slots", waferEdit(t, "slots: [{count: 12, context: 8192}]", "slots: []"),
			"t.yaml:21: field pools[1].wafer.slots: at least one slot class is required"},
		{"zero slots", waferEdit(t, "count: 12", "count: 0"),
			"t.yaml:21: field pools[1].wafer.slots[0].count: must be in [1, 16777216], got 0"},
		{"unknown pressure", waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: evict"),
			`t.yaml:21: field pools[1].wafer.pressure_policy: unknown policy "evict" (known: queue, reject, recompile)`},
		{"reject phase", waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: reject\n      reject_phase: 3"),
			"t.yaml:22: field pools[1].wafer.reject_phase: must be 1 (re-run the request) or 2"},
		{"tp on a wafer", waferEdit(t, "role: decode", "role: decode\n    tp: 4"),
			"t.yaml:18: field pools[1].tp: a wafer pool is sized by wafer.wafers, not tp (got tp 4)"},
		{"gpu step time on a wafer", waferEdit(t, "role: decode", "role: decode\n    step_time: {model: roofline}"),
			"t.yaml:18: field pools[1].step_time.model: a wafer pool's step time is the wafer model, not roofline"},
		{"wafer step time on a GPU", strings.Replace(waferBase, "    tp: 4\n", "    tp: 4\n    step_time: {model: wafer}\n", 1),
			"t.yaml:16: field pools[0].step_time.model: the wafer model goes with a wafer block on wafer hardware"},
		{"prefill efficiency", waferEdit(t, "wafers: 4", "wafers: 4\n      prefill_efficiency: 2"),
			"t.yaml:21: field pools[1].wafer.prefill_efficiency: must be in (0, 1], got 2"},
		{"zero layer latency", waferEdit(t, "wafers: 4", "wafers: 4\n      layer_latency: 0"),
			"t.yaml:21: field pools[1].wafer.layer_latency: must be positive"},
		{"zero width latency", waferEdit(t, "wafers: 4", "wafers: 4\n      width_latency: 0"),
			"t.yaml:21: field pools[1].wafer.width_latency: must be positive"},
		{"old stage latency", waferEdit(t, "wafers: 4", "wafers: 4\n      stage_latency: 545us"),
			"field pools[1].wafer.stage_latency: unknown field (known: layer_latency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseBuild(t, tc.doc, "t.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestWaferBuild checks what a wafer pool becomes: slot layouts, pressure,
// max_model_len from the longest slot, the wafer timer, the staging rate
// and the devices counted and costed.
func TestWaferBuild(t *testing.T) {
	doc := waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: recompile\n      recompile_time: 30s\n"+
		"      layouts: [[{count: 3, context: 32768}]]")
	l, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Pools[1]
	if p.Preemption != "none" || p.StepTime.Model != "wafer" {
		t.Errorf("defaults: preemption %q, step_time.model %q", p.Preemption, p.StepTime.Model)
	}
	d := b.Config.Instances[1]
	want := [][]engine.SlotClass{{{Count: 12, ContextTokens: 8192}}, {{Count: 3, ContextTokens: 32768}}}
	e := d.Engine
	if len(e.Layouts) != 2 || e.Layouts[0][0] != want[0][0] || e.Layouts[1][0] != want[1][0] ||
		e.Pressure != engine.PressureRecompile || e.RecompileNs != 30e9 || e.MaxModelLen != 32768 {
		t.Errorf("engine = %+v", e)
	}
	if _, ok := d.Timer.(*perf.Wafer); !ok {
		t.Errorf("timer is %T, want *perf.Wafer", d.Timer)
	}
	if d.StagingBps != 100e9 || d.GPUs != 4 {
		t.Errorf("staging %g B/s, devices %d; want 100e9 and 4", d.StagingBps, d.GPUs)
	}
	// 4 H100 at 3.0 + 4 WSE-3 at 60 USD per hour.
	if b.GPUs != 8 || b.CostPerHour != 252 {
		t.Errorf("devices %d, cost %g/h; want 8 and 252", b.GPUs, b.CostPerHour)
	}
	if b.Config.Instances[0].StagingBps != 0 {
		t.Error("the GPU prefiller stages KV")
	}
}

func TestWaferRejectAndOverrides(t *testing.T) {
	doc := waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: reject\n      reject_phase: 2\n"+
		"      staging_rate: 0GB/s\n      layer_latency: 4.28us\n      width_latency: 137ns")
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := b.Config.Instances[1]
	if d.RejectPhase != 2 || d.StagingBps != 0 || d.Engine.Pressure != engine.PressureReject {
		t.Errorf("reject phase %d, staging %g, pressure %v", d.RejectPhase, d.StagingBps, d.Engine.Pressure)
	}
	// The catalog's Oct/Nov 2024 override: 80 layers · (4.28 + 0.137·8.192) µs
	// + 3·5 µs + ~18.8 µs + 10 µs ≈ 0.476 ms, about 2,100 tokens/s per user.
	ns := d.Timer.StepNs(&perf.Batch{DecodeSeqs: 1, DecodeContext: 1000})
	if ns < 470_000 || ns > 482_000 {
		t.Errorf("decode step with layer_latency 4.28us, width_latency 137ns = %d ns, want ~476 µs", ns)
	}
}

// TestWaferEffectiveRoundTrip: the effective rendering of a wafer scenario
// (with preemption: none and step_time.model: wafer filled in) loads back
// to the same cluster.
func TestWaferEffectiveRoundTrip(t *testing.T) {
	doc := waferEdit(t, "wafers: 4", "wafers: 4\n      pressure_policy: reject\n      staging_rate: 0GB/s")
	file := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, file, nil)
}

// TestTrainiumPrefillWaferDecodeRuns: a Trainium2 prefill pool needs
// nothing new (the roofline with its catalog figures).
func TestTrainiumPrefillWaferDecodeRuns(t *testing.T) {
	doc := waferEdit(t, "hardware: h100-sxm", "hardware: trainium2")
	doc = strings.Replace(doc, "requests: 1", "requests: 20", 1)
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Config.Instances[0].Timer.(*perf.Roofline); !ok {
		t.Errorf("trainium2 timer is %T", b.Config.Instances[0].Timer)
	}
	runAllComplete(t, b, 20)
}
