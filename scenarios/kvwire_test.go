package scenarios

import (
	"strings"
	"testing"
)

// TestKVOnTheWireIsPerRank: a decoder pulls KV rank by rank, as vLLM's
// NixlConnector does, so what ranks replicate crosses the wire once per
// rank. Llama-3.1-70B at TP 4 splits its 8 KV heads: 4 ranks × 81,920 B
// = the model's 327,680 B per token. DeepSeek-V3's MLA latent (71,980 B
// per token) is replicated on all 8 ranks: 8 × 71,980 B. Without a
// topology, an instance's NIC links carry tp × the link's per-device
// bandwidth.
func TestKVOnTheWireIsPerRank(t *testing.T) {
	doc := strings.Replace(strings.Replace(base, "model: llama-3.1-8b", "model: llama-3.1-70b", 1),
		"    hardware: h100-sxm\n    engine: {block_size: 16}", "    hardware: h100-sxm\n    tp: 4\n    engine: {block_size: 16}", 1)
	doc = strings.Replace(doc, "    count: 2\n    hardware: h100-sxm\n", "    count: 2\n    hardware: h100-sxm\n    tp: 4\n", 1)
	_, b, err := parseBuild(t, doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := b.Config.Instances[1]
	if got := dec.KVIn.Bytes(1000); got != 1000*327_680 {
		t.Errorf("70B at TP 4: %g bytes for 1000 tokens, want %d", got, 1000*327_680)
	}
	caps := b.Config.Topology.Caps
	if caps[0] != 4*450e9 { // prefill-0/egress, NVLink4 per device
		t.Errorf("a TP-4 instance's egress carries %g B/s, want 4 × 450 GB/s", caps[0])
	}

	mla := strings.NewReplacer("model: llama-3.1-8b", "model: deepseek-v3", "hardware: h100-sxm", "hardware: h200").Replace(base)
	mla = strings.Replace(mla, "    hardware: h200\n    engine:", "    hardware: h200\n    tp: 8\n    engine:", 1)
	mla = strings.Replace(mla, "    count: 2\n    hardware: h200\n", "    count: 2\n    hardware: h200\n    tp: 8\n", 1)
	_, b, err = parseBuild(t, mla, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	latent := b.Model.KVBytesPerToken()
	if got := b.Config.Instances[1].KVIn.Bytes(1); got != 8*latent {
		t.Errorf("DeepSeek-V3 at TP 8: %g bytes per token on the wire, want 8 × %g", got, latent)
	}
}
