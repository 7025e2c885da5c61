package llm

import (
	"strings"
	"testing"
)

// TestKVBytesHeld: gpt-oss-120b's full layers keep every token, its
// sliding layers the tokens of their last cdiv(128, B)+1 blocks; a model
// without sliding layers keeps tokens·KVBytesPerToken exactly.
func TestKVBytesHeld(t *testing.T) {
	oss := mustModel(t, "gpt-oss-120b")
	if full, sliding := oss.KVBytesPerTokenFull(), oss.KVBytesPerTokenSliding(); full != 36864 || sliding != 36864 {
		t.Errorf("gpt-oss-120b per token: full %v, sliding %v, want 18·2·8·64·2 = 36864 each", full, sliding)
	}
	tests := []struct {
		tokens, block, sliding int // sliding: tokens the sliding layers hold
	}{
		{0, 16, 0},
		{100, 16, 100},      // inside the window
		{144, 16, 144},      // 9 blocks: cdiv(128, 16)+1
		{145, 16, 144},      // past them
		{100000, 16, 144},   // 6250 blocks, 9 of them held
		{1000, 1, 129},      // one-token blocks: the window and one
		{1000, 100, 300},    // cdiv(128, 100)+1 = 3 blocks of 100
		{100000, 512, 1024}, // 2 blocks of 512
	}
	for _, tt := range tests {
		if got := min(tt.tokens, oss.SlidingWindowTokens(tt.block)); got != tt.sliding {
			t.Errorf("min(%d, SlidingWindowTokens(%d)) = %d, want %d", tt.tokens, tt.block, got, tt.sliding)
		}
		want := 36864*float64(tt.tokens) + 36864*float64(tt.sliding)
		if got := oss.KVBytesHeld(tt.tokens, tt.block); got != want {
			t.Errorf("KVBytesHeld(%d, %d) = %v, want %v", tt.tokens, tt.block, got, want)
		}
		// TP 2: four KV heads a rank, 2·4·64·2 = 1024 B per layer and token.
		if got, want := oss.KVBytesHeldPerShard(tt.tokens, tt.block, 2), want/2; got != want {
			t.Errorf("KVBytesHeldPerShard(%d, %d, 2) = %v, want %v", tt.tokens, tt.block, got, want)
		}
	}
	if got := oss.KVBytesHeld(100000, 16); got >= 0.51*oss.KVBytesPerToken()*100000 {
		t.Errorf("100k tokens hold %v B, not about half the all-layers %v", got, oss.KVBytesPerToken()*100000)
	}
	for _, m := range Default().Models() {
		if m.SlidingLayers > 0 {
			continue
		}
		if w := m.SlidingWindowTokens(16); w != 0 {
			t.Errorf("%s: SlidingWindowTokens = %d without sliding layers", m.Name, w)
		}
		for _, n := range []int{1, 17, 100000} {
			if got, want := m.KVBytesHeld(n, 16), float64(n)*m.KVBytesPerToken(); got != want {
				t.Errorf("%s: KVBytesHeld(%d) = %v, want %v", m.Name, n, got, want)
			}
			if got, want := m.KVBytesHeldPerShard(n, 16, 2), float64(n)*m.KVBytesPerTokenPerShard(2); got != want {
				t.Errorf("%s: KVBytesHeldPerShard(%d, 2) = %v, want %v", m.Name, n, got, want)
			}
		}
	}
}

// TestKVGroups follows vLLM's grouping: groups of the smaller kind's layer
// count, or the larger's when that is under 1.5 times it.
func TestKVGroups(t *testing.T) {
	tests := []struct {
		layers, sliding int
		want            KVGroups
	}{
		{36, 0, KVGroups{36, 1, 0}},
		{36, 18, KVGroups{18, 1, 1}}, // gpt-oss-120b
		{25, 12, KVGroups{13, 1, 1}}, // 12 sliding + 13 full: vLLM's gpt-oss-20b + eagle example, padded to 13 + 13
		{48, 40, KVGroups{8, 1, 5}},  // 5:1, Gemma 3 style
		{62, 52, KVGroups{10, 1, 6}}, // 52 sliding + 10 full: the last sliding group padded
		{30, 20, KVGroups{10, 1, 2}}, // vLLM's docstring: 10 full + 20 sliding, three groups
		{29, 12, KVGroups{17, 1, 1}}, // 17 full < 1.5·12: one group each, the sliding one padded
		{30, 30, KVGroups{30, 0, 1}}, // every layer sliding (refused by the catalog)
		{50, 20, KVGroups{20, 2, 1}}, // 30 full ≥ 1.5·20: two full groups (refused by the catalog)
	}
	for _, tt := range tests {
		m := &Model{Layers: tt.layers, SlidingLayers: tt.sliding}
		if got := m.KVGroups(); got != tt.want {
			t.Errorf("%d layers, %d sliding: %+v, want %+v", tt.layers, tt.sliding, got, tt.want)
		}
	}
	oss := mustModel(t, "gpt-oss-120b")
	if got := oss.KVBlockBytesPerShard(1, 16); got != 18*2048*16 {
		t.Errorf("gpt-oss-120b block: %v B, want 18·2048·16 = 589824", got)
	}
	if got, all := oss.KVBlockBytesPerShard(4, 16), oss.KVBytesPerTokenPerShard(4)*16; got != all/2 {
		t.Errorf("gpt-oss-120b block at TP 4: %v B, want half of %v", got, all)
	}
	for _, m := range Default().Models() {
		if got, want := m.KVBlockBytesPerShard(2, 16), m.KVBytesPerTokenPerShard(2)*16; m.SlidingLayers == 0 && got != want {
			t.Errorf("%s: block %v B, want %v", m.Name, got, want)
		}
	}
}

// TestSlidingLayoutsRefused: a model the engine cannot hold as one
// full-attention table per sequence is an error naming the field.
func TestSlidingLayoutsRefused(t *testing.T) {
	base := "models:\n  - {name: m, layers: 3, hidden: 64, heads: 4, kv_heads: 2, intermediate: 128, vocab: 100, " +
		"params_total: 1e6, max_context: 512, source: s, sliding_window: 8, "
	for in, want := range map[string]string{
		base + "sliding_layers: 3}\n": "m.yaml:2: field models[0].sliding_layers: every layer slides",
		base + "sliding_layers: 1}\n": "field models[0].sliding_layers: 1 sliding-window layers beside 2 full-attention ones: vLLM splits the full layers into 2 KV cache groups",
		base + "sliding_layers: 2}\n": "",
	} {
		_, err := Parse([]byte(in), "m.yaml")
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

// TestUnifiedKV: with the hybrid KV cache manager off, gpt-oss-120b keeps
// every token in all 36 layers — 73,728 B a token, twice the 36,864 its
// full layers keep with it on — in blocks of every layer; a model without
// sliding layers is unchanged.
func TestUnifiedKV(t *testing.T) {
	oss := mustModel(t, "gpt-oss-120b")
	u := oss.UnifiedKV()
	if got := u.KVBytesHeld(5000, 16); got != 73728*5000 {
		t.Errorf("unified KVBytesHeld(5000) = %v, want 73728·5000", got)
	}
	if got, want := u.KVBlockBytesPerShard(2, 16), 2*oss.KVBlockBytesPerShard(2, 16); got != want {
		t.Errorf("unified block %v B at TP 2, want %v (every layer, not one group's 18)", got, want)
	}
	if g := u.KVGroups(); g.Sliding != 0 || g.LayersPerGroup != 36 {
		t.Errorf("unified groups %+v, want one group of 36 layers", g)
	}
	if oss.SlidingLayers != 18 || u.KVBytesPerToken() != oss.KVBytesPerToken() || u.Layers != oss.Layers {
		t.Errorf("UnifiedKV changed the model it was called on, or its layers: %+v", u)
	}
	dense := mustModel(t, "llama-3.1-8b")
	if dense.UnifiedKV() != dense {
		t.Error("UnifiedKV of a model without sliding layers is not the model itself")
	}
}
