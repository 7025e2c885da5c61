package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"handoff/models/engine"
	"handoff/results"
	"handoff/sim"
)

// hybridDoc is minimal on gpt-oss-120b: a colocated H100, one 100k-token
// request.
var hybridDoc = strings.NewReplacer("model: llama-3.1-8b", "model: gpt-oss-120b",
	"requests: 5", "requests: 1", "value: 10}", "value: 100000}").Replace(minimal)

// TestHybridPoolHoldsTwiceTheContext: vLLM sizes gpt-oss-120b's pool in
// blocks of one KV cache group (18 of its 36 layers), so an H100 holds
// twice the blocks it would with every layer in each block, and a
// 100,000-token context — which an all-layers pool (89,408 tokens)
// cannot hold — fits with room for the sliding window.
func TestHybridPoolHoldsTwiceTheContext(t *testing.T) {
	_, b, err := parseBuild(t, hybridDoc, "h.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, cfg := b.Model, b.Config.Instances[0].Engine
	budget := 80e9*0.9 - m.WeightBytesTotal()
	allLayers := int(budget / (m.KVBytesPerToken() * 16)) // every layer in each block
	if want := int(budget / (18 * 2048 * 16)); cfg.NumBlocks != want || cfg.NumBlocks < 2*allLayers {
		t.Errorf("%d blocks, want %d (twice the %d of an all-layers pool)", cfg.NumBlocks, want, allLayers)
	}
	if cfg.SlidingWindow != 128 || cfg.SlidingGroups != 1 {
		t.Errorf("window %d tokens in %d groups, want 128 in 1", cfg.SlidingWindow, cfg.SlidingGroups)
	}
	if all := allLayers * 16; all >= 100_000 || cfg.CapacityTokens() < 100_000 {
		t.Errorf("capacity %d tokens (all layers: %d): a 100k context should fit now and not before",
			cfg.CapacityTokens(), all)
	}
	lines := b.KVCapacity()
	if want := fmt.Sprintf("pool p, vllm latest (0.33): %d KV blocks of 16 tokens per instance, %d tokens of context (a block holds 18 of 36 layers; "+
		"each sequence's 1 sliding-window group(s) of 128 tokens take up to 9 blocks besides)", cfg.NumBlocks, 16*cfg.NumBlocks); len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("KVCapacity %q\nwant %q…", lines, want)
	}
	t.Logf("gpt-oss-120b on an H100: %d blocks of 16 tokens (%d tokens of context; all layers per block: %d blocks, %d tokens)",
		cfg.NumBlocks, cfg.NumBlocks*16, allLayers, allLayers*16)
}

// TestHybridLongContextIsServed runs the 100k-token request: it completes,
// where before it was dropped as too long for any instance.
func TestHybridLongContextIsServed(t *testing.T) {
	_, b, err := parseBuild(t, strings.Replace(hybridDoc, "value: 2}", "value: 4}", 1), "h.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Records[0]; len(res.Records) != 1 || r.Status != results.Completed || r.PromptTokens != 100_000 {
		t.Errorf("records %d, the first %+v", len(res.Records), res.Records[0])
	}
}

// TestHybridKVOnTheWire: a decoder pulls the full layers' KV for every
// prompt token and the sliding layers' for the last 9 blocks only, rank by
// rank; a model without sliding layers is unchanged.
func TestHybridKVOnTheWire(t *testing.T) {
	doc := strings.Replace(base, "model: llama-3.1-8b", "model: gpt-oss-120b", 1)
	doc = strings.Replace(doc, "    count: 2\n    hardware: h100-sxm\n", "    count: 2\n    hardware: h100-sxm\n    tp: 2\n", 1)
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := b.Config.Instances[1].KVIn
	for _, n := range []int{100, 144, 100_000} {
		if got, want := in.Bytes(n), 2*b.Model.KVBytesHeldPerShard(n, 16, 2); got != want {
			t.Errorf("%d tokens: %g bytes on the wire, want %g", n, got, want)
		}
	}
	if got := in.Bytes(100_000); got != b.Model.KVBytesHeld(100_000, 16) {
		t.Errorf("100k tokens: %g bytes, want KVBytesHeld %g (8 KV heads split over 2 ranks)", got, b.Model.KVBytesHeld(100_000, 16))
	}
	var plain engine.Config
	_, pb, err := parseBuild(t, base, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if plain = pb.Config.Instances[1].Engine; plain.SlidingGroups != 0 || pb.Config.Instances[1].KVIn.WindowTokens != 0 {
		t.Errorf("llama-3.1-8b: %d sliding groups, window %d", plain.SlidingGroups, pb.Config.Instances[1].KVIn.WindowTokens)
	}
}

// TestHybridClusterConserves runs gpt-oss-120b P/D clusters whose decoders
// are short of KV (shared prompts, so prefix hits too) under each
// preemption policy: every run ends with every request ended and every
// block back in its pool (sim.Run checks both), preempts, and repeats
// itself exactly.
func TestHybridClusterConserves(t *testing.T) {
	doc := `name: h
model: gpt-oss-120b
slo: {ttft: 2s, tpot: 100ms}
workload:
  shared_prefix: {num_unique_system_prompts: 3, num_users_per_system_prompt: 4, system_prompt_len: 700,
    question_len: 300, output_len: 900, stages: [{duration: 4s, rate: 40/s}]}
pools:
  - {name: prefill, role: prefill, hardware: h100-sxm}
  - {name: decode, role: decode, count: 2, hardware: h100-sxm, engine: {memory_utilization: 0.83}, POLICY}
`
	for _, policy := range []string{"preemption: recompute", "preemption: swap, swap: {host_memory: 2GB}",
		"preemption: reject, reject: {cache_hit_threshold: 0.3}"} {
		_, b, err := parseBuild(t, strings.Replace(doc, "POLICY", policy, 1), "h.yaml")
		if err != nil {
			t.Fatal(err)
		}
		a, err := sim.Run(b.Config)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		_, b2, _ := parseBuild(t, strings.Replace(doc, "POLICY", policy, 1), "h.yaml")
		again, err := sim.Run(b2.Config)
		if err != nil || !sameRun(a, again) {
			t.Fatalf("%s: a second run differs (%v)", policy, err)
		}
		preemptions := 0
		for _, r := range a.Records {
			preemptions += int(r.Preemptions)
		}
		if preemptions == 0 {
			t.Errorf("%s: no preemption: the decoders are not short of KV", policy)
		}
		t.Logf("%s: %d requests, %d preemptions", policy, len(a.Records), preemptions)
	}
}

// sameRun reports whether two runs agree exactly: events, time, every
// record and every instance's counters.
func sameRun(a, b *sim.Result) bool {
	return a.Events == b.Events && a.SimTimeNs == b.SimTimeNs && reflect.DeepEqual(a.Records, b.Records) &&
		reflect.DeepEqual(a.Instances, b.Instances)
}
