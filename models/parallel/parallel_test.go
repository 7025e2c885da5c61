package parallel

import (
	"errors"
	"math"
	"strings"
	"testing"

	"handoff/models/llm"
)

func model(t *testing.T, name string) *llm.Model {
	t.Helper()
	m, err := llm.Default().Model(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestTensorWeightsAreTheTotalOverTP: without expert parallelism every
// weight is sharded by TP. Llama-3.1-70B at TP 4: 70.6e9·2/4 = 35.3 GB.
func TestTensorWeightsAreTheTotalOverTP(t *testing.T) {
	m := model(t, "llama-3.1-70b")
	if got := Tensor(4).WeightBytes(m); got != 35.3e9 {
		t.Errorf("weights per device = %g, want 35.3e9", got)
	}
}

// TestExpertParallelWeights: with EP the routed experts are spread whole
// over the EP devices while the rest is sharded by TP within each DP
// rank. Mixtral-8x7B (46.7e9 total, 12.9e9 active, 8 experts top-2): the
// experts hold 8·(46.7−12.9)/6 = 45.0667e9 parameters, the rest 1.6333e9;
// at DP 4 × TP 2, EP 8, a device holds 1.6333e9·2/2 + 45.0667e9·2/8.
func TestExpertParallelWeights(t *testing.T) {
	m := model(t, "mixtral-8x7b")
	experts := 8 * (m.ParamsTotal - m.ParamsActive) / 6
	want := (m.ParamsTotal-experts)*2/2 + experts*2/8
	got := Layout{TP: 2, DP: 4, EP: 8, PP: 1}.WeightBytes(m)
	if !near(got, want) {
		t.Errorf("weights per device = %g, want %g", got, want)
	}
}

// TestMLAKVPerRankAtTP8 by hand: DeepSeek-V3's latent is
// (kv_lora_rank 512 + rope 64) elements of kv_bytes over 61 layers and is
// replicated on every TP rank, so a device holds all of it and a TP 8
// decoder pulls it 8 times.
func TestMLAKVPerRankAtTP8(t *testing.T) {
	m := model(t, "deepseek-v3")
	perRank := 61 * (512 + 64) * m.KVBytes
	mem := Tensor(8).Memory(m, 141e9, 0.9, 64)
	if mem.KVBytesPerToken != perRank {
		t.Errorf("KV per token per device = %g, want %g", mem.KVBytesPerToken, perRank)
	}
	if w := Tensor(8).Wire(m, 64); w.PerToken != 8*perRank || w.WindowPerToken != 0 {
		t.Errorf("wire = %+v, want %g per token", w, 8*perRank)
	}
}

// TestMemoryBlocks: the budget is memory × utilization less the
// weights, in blocks of one group's layers. Llama-3.1-8B at TP 1 on 80 GB
// at 0.9: 72e9 − 16.06e9 over 16 tokens · 131072 B.
func TestMemoryBlocks(t *testing.T) {
	m := model(t, "llama-3.1-8b")
	mem := Tensor(1).Memory(m, 80e9, 0.9, 16)
	if want := (72e9 - 16.06e9) / (16 * 131072); !near(mem.Blocks, want) {
		t.Errorf("blocks = %g, want %g", mem.Blocks, want)
	}
}

// TestCheckRefusals names the degree at fault for each layout vLLM (or
// handoff) refuses.
func TestCheckRefusals(t *testing.T) {
	dense, moe := model(t, "llama-3.1-70b"), model(t, "qwen3-235b-a22b")
	cases := []struct {
		m     *llm.Model
		l     Layout
		field string
		want  string
	}{
		{dense, Tensor(3), "tp", "do not split evenly"},
		{dense, Layout{TP: 1, DP: 1, EP: 2, PP: 1}, "ep", "dense"},
		{dense, Layout{TP: 1, DP: 2, EP: 2, PP: 1}, "ep", "dense"},
		{moe, Layout{TP: 2, DP: 4, EP: 1, PP: 1}, "ep", "needs ep = dp × tp = 8"},
		{moe, Layout{TP: 2, DP: 4, EP: 4, PP: 1}, "ep", "must equal dp × tp = 8"},
		{moe, Layout{TP: 1, DP: 3, EP: 3, PP: 1}, "ep", "does not divide"},
		{moe, Layout{TP: 0, DP: 1, EP: 1, PP: 1}, "tp", "at least 1"},
	}
	for _, c := range cases {
		err := c.l.Check(c.m)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("%s %v: err %v, want field %s with %q", c.m.Name, c.l, err, c.field, c.want)
		}
	}
	if err := (Layout{TP: 1, DP: 8, EP: 8, PP: 1}).Check(moe); err != nil {
		t.Errorf("dp8 ep8 on %s: %v", moe.Name, err)
	}
}

func TestLayoutNames(t *testing.T) {
	for _, c := range []struct {
		l          Layout
		name, desc string
	}{
		{Tensor(4), "tp4", "TP 4"},
		{Tensor(1), "tp1", "TP 1"},
		{Layout{TP: 1, DP: 8, EP: 8, PP: 1}, "dp8·tp1·ep8", "DP 8 × TP 1, EP 8"},
		{Pipeline(4), "pp4", "TP 1, PP 4"},
	} {
		if c.l.String() != c.name || c.l.Describe() != c.desc {
			t.Errorf("%+v: %q, %q; want %q, %q", c.l, c.l.String(), c.l.Describe(), c.name, c.desc)
		}
		if c.l.Devices() != c.l.DP*c.l.TP*c.l.PP {
			t.Errorf("%+v: devices %d", c.l, c.l.Devices())
		}
	}
}
