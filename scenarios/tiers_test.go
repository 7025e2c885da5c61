package scenarios

import (
	"strings"
	"testing"

	"handoff/models/engine"
)

// tiered is base with lower tiers on the prefill pool (line 14 on:
// 14 engine, 15 kv_tiers, 16 the first tier, 17 the second).
func tiered(t *testing.T, tiers string) string {
	return edit(t, "    engine: {block_size: 16}\n", "    engine: {block_size: 16}\n    kv_tiers:\n"+tiers)
}

// TestTierBadInput: each bad tier gives one error naming the line and the
// field.
func TestTierBadInput(t *testing.T) {
	store := "kv_store: {capacity: 1TB, read_bandwidth: 10GB/s, write_bandwidth: 10GB/s}\n"
	tests := []struct {
		name, doc, want string
	}{
		{"zero capacity", tiered(t, "      - {tier: host, capacity: 0GB}\n"),
			"t.yaml:16: field pools[0].kv_tiers[0].capacity: a tier's capacity must be positive"},
		{"negative bandwidth", tiered(t, "      - {tier: host, capacity: 1GB, read_bandwidth: -1GB/s}\n"),
			"t.yaml:16: field pools[0].kv_tiers[0].read_bandwidth"},
		{"disk without bandwidth", tiered(t, "      - {tier: disk, capacity: 1TB}\n"),
			"t.yaml:16: field pools[0].kv_tiers[0].read_bandwidth: a disk tier needs its read_bandwidth and write_bandwidth"},
		{"order", tiered(t, "      - {tier: disk, capacity: 1TB, read_bandwidth: 7GB/s, write_bandwidth: 5GB/s}\n"+
			"      - {tier: host, capacity: 1GB}\n"),
			"t.yaml:17: field pools[0].kv_tiers[1].tier: tiers run HBM → host → disk → store: host cannot follow disk"},
		{"unknown tier", tiered(t, "      - {tier: tape, capacity: 1GB}\n"),
			`t.yaml:16: field pools[0].kv_tiers[0].tier: unknown tier "tape"`},
		{"unknown offload", tiered(t, "      - {tier: host, capacity: 1GB, offload: sometimes}\n"),
			`t.yaml:16: field pools[0].kv_tiers[0].offload: unknown offload "sometimes"`},
		{"store not defined", tiered(t, "      - {tier: store}\n"),
			"t.yaml:16: field pools[0].kv_tiers[0].tier: the pool reads a store the scenario does not define"},
		{"store no pool reaches", base + store, "t.yaml:19: field kv_store: no pool reaches the store"},
		{"store zero bandwidth", tiered(t, "      - {tier: store}\n") +
			"kv_store: {capacity: 1TB, read_bandwidth: 0GB/s, write_bandwidth: 10GB/s}\n",
			"field kv_store.read_bandwidth: the store's read bandwidth must be positive"},
		{"store with figures", tiered(t, "      - {tier: store, capacity: 1TB}\n") + store,
			"t.yaml:16: field pools[0].kv_tiers[0]: a store's figures are the scenario's kv_store's"},
		{"handoff without store", edit(t, "    engine: {block_size: 16}\n", "    engine: {block_size: 16}\n    kv_handoff: store\n"),
			"t.yaml:15: field pools[0].kv_handoff: a handoff through the store needs {tier: store} in kv_tiers"},
		{"swap space beside a host tier", strings.Replace(tiered(t, "      - {tier: host, capacity: 1GB}\n"),
			"    role: prefill\n", "    role: prefill\n    preemption: swap\n    swap: {host_memory: 8GB}\n", 1),
			"t.yaml:14: field pools[0].swap: swap space and a host KV tier are one capacity"},
	}
	for _, tc := range tests {
		_, _, err := parseBuild(t, tc.doc, "t.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestTiersBuild: every instance gets host and disk tiers of its own and
// the one shared store, sized in blocks of the instance's KV.
func TestTiersBuild(t *testing.T) {
	doc := tiered(t, "      - {tier: host, capacity: 2GiB}\n      - {tier: store}\n") +
		"kv_store: {capacity: 1TB, read_bandwidth: 10GB/s, write_bandwidth: 5GB/s, latency: 50us}\n"
	doc = strings.Replace(doc, "    role: prefill\n", "    role: prefill\n    count: 2\n", 1)
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := b.Config.Instances[0].Engine.Tiers, b.Config.Instances[1].Engine.Tiers
	if len(p0) != 2 || p0[0] == p1[0] || p0[1] != p1[1] || p0[1].Kind != engine.TierStore {
		t.Fatalf("tiers %v and %v: want own host tiers and one shared store", p0, p1)
	}
	block := p0[0].BlockBytes // llama-3.1-8b: 128 KiB a token, 16 tokens
	if block != 16*131072 || p0[0].Blocks.Capacity() != int(2*(1<<30)/block) {
		t.Errorf("host: %g bytes a block, %d blocks", block, p0[0].Blocks.Capacity())
	}
	if s := p0[1]; s.ReadBps != 10e9 || s.ReadLatencyNs != 50_000 || s.WriteNsPerBlock != block/5e9*1e9 {
		t.Errorf("store: %+v", s)
	}
	if len(b.Config.Instances[2].Engine.Tiers) != 0 {
		t.Error("the decode pool got tiers it does not list")
	}
}

// TestTiersNeedPrefixCaching: tiers on a pool without prefix caching are
// refused where they are written.
func TestTiersNeedPrefixCaching(t *testing.T) {
	noCache := strings.Replace(tiered(t, "      - {tier: host, capacity: 1GB}\n"), "{block_size: 16}",
		"{block_size: 16, prefix_caching: false}", 1)
	if _, _, err := parseBuild(t, noCache, "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "t.yaml:15: field pools[0].kv_tiers: lower KV tiers find blocks by their prefix hashes") {
		t.Errorf("without prefix caching: %v", err)
	}
}

// TestHybridTiers: a model with sliding-window layers takes lower tiers
// under the latest release and from vLLM 0.21 on, each tier entry one KV
// cache group's block; a release before 0.21, or tiers that take no
// finishing sequence's blocks, are refused naming the field.
func TestHybridTiers(t *testing.T) {
	hybrid := func(tier, vllm string) string {
		doc := strings.Replace(tiered(t, "      - "+tier+"\n"), "model: llama-3.1-8b", "model: gpt-oss-20b", 1)
		return strings.Replace(doc, "{block_size: 16}", "{block_size: 16"+vllm+"}", 1)
	}
	for _, vllm := range []string{"", ", vllm: \"0.21\", hybrid_kv_with_connector: true"} {
		_, b, err := parseBuild(t, hybrid("{tier: host, capacity: 100GB}", vllm), "t.yaml")
		if err != nil {
			t.Fatalf("engine %q: %v", vllm, err)
		}
		ic := b.Config.Instances[0].Engine
		if ic.SlidingGroups != 1 || len(ic.Tiers) != 1 {
			t.Fatalf("engine %q: %d sliding groups, %d tiers", vllm, ic.SlidingGroups, len(ic.Tiers))
		}
	}
	if _, _, err := parseBuild(t, hybrid("{tier: host, capacity: 100GB}", ", vllm: \"0.20\", hybrid_kv_with_connector: true"), "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "field pools[0].engine.vllm: gpt-oss-20b has sliding-window layers: lower KV "+
			"tiers for a model with sliding-window layers came with vLLM 0.21") {
		t.Errorf("vLLM 0.20: %v", err)
	}
	if _, _, err := parseBuild(t, hybrid("{tier: host, capacity: 100GB, offload: eviction}", ""), "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "t.yaml:15: field pools[0].kv_tiers: gpt-oss-20b has sliding-window layers, "+
			"whose blocks go down a tier only as a sequence finishes") {
		t.Errorf("write-back only: %v", err)
	}
}
