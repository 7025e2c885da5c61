package scenarios

import (
	"strings"
	"testing"
)

// TestHybridKVWithConnector: a prefill or decode pool of gpt-oss-120b
// under vLLM 0.11 keeps full KV in every layer, as vLLM turns its hybrid
// KV cache manager off beside a KV connector (VllmConfig.__post_init__):
// its blocks hold all 36 layers, so it has half the blocks, and its
// decoder pulls 73,728 B for every prompt token. vLLM 0.23 keeps it on
// (PR #41847): blocks of one group of 18 layers, and the sliding layers'
// last 9 blocks only on the wire. A colocated pool has no connector and
// keeps it on under any release.
func TestHybridKVWithConnector(t *testing.T) {
	doc := strings.Replace(base, "model: llama-3.1-8b", "model: gpt-oss-120b", 1)
	doc = strings.Replace(doc, "    count: 2\n    hardware: h100-sxm\n", "    count: 2\n    hardware: h100-sxm\n    tp: 2\n", 1)
	release := func(v string) string {
		d := strings.Replace(doc, "engine: {block_size: 16}", "engine: {block_size: 16, vllm: \""+v+"\"}", 1)
		return strings.Replace(d, "    tp: 2\n", "    tp: 2\n    engine: {vllm: \""+v+"\"}\n", 1)
	}
	_, old, err := parseBuild(t, release("0.11"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, now, err := parseBuild(t, release("0.23"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := now.Model
	for i, pool := range []string{"prefill", "decode"} {
		o, n := old.Config.Instances[i].Engine, now.Config.Instances[i].Engine
		if o.SlidingGroups != 0 || n.SlidingGroups != 1 || o.NumBlocks != n.NumBlocks/2 {
			t.Errorf("%s: 0.11 %d blocks, %d sliding groups; 0.23 %d blocks, %d groups: want half the blocks and none",
				pool, o.NumBlocks, o.SlidingGroups, n.NumBlocks, n.SlidingGroups)
		}
	}
	oldIn, nowIn := old.Config.Instances[1].KVIn, now.Config.Instances[1].KVIn
	if got := oldIn.Bytes(5000); got != 73728*5000 {
		t.Errorf("0.11: a 5000-token prompt moves %g B, want 73,728 B a token", got)
	}
	if got, want := nowIn.Bytes(5000), m.KVBytesHeld(5000, 16); got != want {
		t.Errorf("0.23: a 5000-token prompt moves %g B, want KVBytesHeld %g", got, want)
	}
	line := old.KVCapacity()[1]
	if !strings.Contains(line, "a block holds all 36 layers: the hybrid KV cache manager is off beside the KV connector") {
		t.Errorf("KVCapacity %q does not say why its blocks hold every layer", line)
	}
	col := strings.NewReplacer("model: llama-3.1-8b", "model: gpt-oss-120b").Replace(minimal)
	col = strings.Replace(col, "hardware: h100-sxm", "hardware: h100-sxm\n    engine: {vllm: \"0.11\"}", 1)
	_, c, err := parseBuild(t, col, "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Config.Instances[0].Engine; e.SlidingGroups != 1 {
		t.Errorf("colocated under 0.11: %d sliding groups, want 1 (no connector, the manager stays on)", e.SlidingGroups)
	}
}

// TestHybridKVWithConnectorRefused: a release that did not have the
// hybrid KV cache manager beside NIXL refuses it, naming the release that
// brought it; prefill and decode pools that lay their KV out differently
// are refused, as NIXL moves blocks as they are; a dense model does not
// care.
func TestHybridKVWithConnectorRefused(t *testing.T) {
	oss := strings.Replace(base, "model: llama-3.1-8b", "model: gpt-oss-120b", 1)
	tests := []struct{ name, doc, want string }{
		{"before its release", strings.Replace(oss, "engine: {block_size: 16}",
			`engine: {block_size: 16, vllm: "0.11", hybrid_kv_with_connector: true}`, 1),
			"t.yaml:14: field pools[0].engine.hybrid_kv_with_connector: true came with vLLM 0.18 (PR #35758, " +
				"NixlConnector keeps it with --no-disable-hybrid-kv-cache-manager); vLLM 0.11 has false"},
		{"layouts differ", strings.Replace(oss, "engine: {block_size: 16}", `engine: {block_size: 16, vllm: "0.11"}`, 1),
			"t.yaml:15: field pools[1].engine.hybrid_kv_with_connector: true beside false at " +
				"pools[0].engine.hybrid_kv_with_connector: the prefill and decode pools of gpt-oss-120b " +
				"(sliding-window layers) must lay out their KV alike, as NIXL moves blocks as they are"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refuses(t, tt.doc, tt.want) })
	}
	dense := strings.Replace(base, "engine: {block_size: 16}", `engine: {block_size: 16, vllm: "0.11"}`, 1)
	if _, _, err := parseBuild(t, dense, "t.yaml"); err != nil {
		t.Errorf("llama-3.1-8b, prefill under 0.11 beside a latest decoder: %v", err)
	}
}
