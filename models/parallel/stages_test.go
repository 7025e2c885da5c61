package parallel

import (
	"errors"
	"slices"
	"testing"
)

// TestStageLayersAsVLLM: layers/pp each, the remainder one each to the
// stages before the last, from the second-to-last backwards, as vLLM's
// get_pp_indices splits them. Llama-3.1-405B has 126 layers.
func TestStageLayersAsVLLM(t *testing.T) {
	m := model(t, "llama-3.1-405b")
	for _, tc := range []struct {
		pp   int
		want []int
	}{
		{1, []int{126}},
		{2, []int{63, 63}},
		{4, []int{31, 32, 32, 31}},     // remainder 2: the middle two
		{5, []int{25, 25, 25, 26, 25}}, // remainder 1: the one before the last
		{8, []int{15, 16, 16, 16, 16, 16, 16, 15}},
		{126, slices.Repeat([]int{1}, 126)},
	} {
		if got := (Layout{TP: 1, DP: 1, EP: 1, PP: tc.pp}).StageLayers(m); !slices.Equal(got, tc.want) {
			t.Errorf("pp %d: %v, want %v", tc.pp, got, tc.want)
		}
	}
}

// TestPipelineMemoryIsTheLargestStage: each stage sizes its pool and the
// instance keeps the smallest, the largest stage's: at pp 4 over 126
// layers a device holds 32/126 of the weights and of the KV per token.
// When pp divides the layers it is the even share, as before.
func TestPipelineMemoryIsTheLargestStage(t *testing.T) {
	m := model(t, "llama-3.1-405b")
	l := Layout{TP: 4, DP: 1, EP: 1, PP: 4}
	mem := l.Memory(m, 80e9, 0.9, 16)
	w := m.WeightBytesTotal() / 4 * 32 / 126
	kv := m.KVBytesPerTokenPerShard(4) * 32 / 126
	if !near(mem.WeightBytes, w) || !near(mem.KVBytesPerToken, kv) || !near(mem.Blocks, (80e9*0.9-w)/(16*kv)) {
		t.Errorf("memory %+v, want weights %g and KV %g per token", mem, w, kv)
	}
	even := Layout{TP: 8, DP: 1, EP: 1, PP: 2}.Memory(m, 80e9, 0.9, 16)
	if even.WeightBytes != m.WeightBytesTotal()/16 || even.KVBytesPerToken != m.KVBytesPerTokenPerShard(8)/2 {
		t.Errorf("even split %+v, want weights/16 and KV/2", even)
	}
}

// TestCheckRefusesPipelinesTooDeep: every stage needs a layer, and
// pipeline stages of data-parallel ranks are not modelled.
func TestCheckRefusesPipelinesTooDeep(t *testing.T) {
	var fe *FieldError
	if err := (Layout{TP: 1, DP: 1, EP: 1, PP: 81}).Check(model(t, "llama-3.1-70b")); !errors.As(err, &fe) || fe.Field != "pp" {
		t.Errorf("pp 81 over 80 layers: %v, want a pp error", err)
	}
	if err := (Layout{TP: 1, DP: 2, EP: 2, PP: 2}).Check(model(t, "mixtral-8x7b")); !errors.As(err, &fe) || fe.Field != "pp" {
		t.Errorf("pp with dp: %v, want a pp error", err)
	}
	if err := (Layout{TP: 2, DP: 1, EP: 1, PP: 3}).Check(model(t, "llama-3.1-70b")); err != nil {
		t.Errorf("pp 3 over 80 layers (uneven, as vLLM allows): %v", err)
	}
}
