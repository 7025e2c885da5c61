package draft

import (
	"testing"

	"handoff/models/llm"
)

// TestMTPNetworkIsOneDeepSeekLayer: DeepSeek-R1's MTP network is one MoE
// decoder layer with eh_proj and the LM head. DeepSeek's model card gives
// the MTP module 14B parameters with its own embedding and head copies
// (685B on Hugging Face = 671B main + 14B MTP); without the embedding
// (0.93B) that is about 13B, and 37B/61 ≈ 0.6B of it active per token
// beside the head.
func TestMTPNetworkIsOneDeepSeekLayer(t *testing.T) {
	m, err := llm.Default().Model("deepseek-r1")
	if err != nil {
		t.Fatal(err)
	}
	net := MTP{}.Network(m, nil)
	if net.Layers != 1 || net.MoELayers() != 1 || net.KVBytesPerToken()*float64(m.Layers) != m.KVBytesPerToken() {
		t.Fatalf("MTP network: %d layers, %d MoE, %.0f B KV per token; want one MoE layer of the target's KV",
			net.Layers, net.MoELayers(), net.KVBytesPerToken())
	}
	if p := net.ParamsTotal; p < 10e9 || p > 14e9 {
		t.Errorf("MTP network %.2fB params, want about 13B", p/1e9)
	}
	if a := net.ParamsActive; a < 1e9 || a > 2.5e9 {
		t.Errorf("MTP network %.2fB active params, want the head (0.93B) and a layer's share of 37B", a/1e9)
	}
	if net.ExpertParams() <= 0 || net.ExpertParams() >= net.ParamsTotal {
		t.Errorf("MTP network's experts %.2fB of %.2fB", net.ExpertParams()/1e9, net.ParamsTotal/1e9)
	}
}

// TestKindsTable: what each method reserves and whether it needs a model.
func TestKindsTable(t *testing.T) {
	m, err := llm.Default().Model("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k         Kind
		lookahead bool
		network   bool
	}{{MTP{}, true, true}, {EAGLE{}, true, true}, {EAGLE3{}, true, true}, {Ngram{}, false, false}, {Model{}, true, true}} {
		if c.k.Lookahead() != c.lookahead || (c.k.Network(m, m) != nil) != c.network {
			t.Errorf("%s: lookahead %v, network %v", c.k.Name(), c.k.Lookahead(), c.k.Network(m, m) != nil)
		}
	}
	if err := (MTP{}).Check(m); err == nil {
		t.Error("mtp accepted llama-3.1-8b, which has no MTP module")
	}
}
