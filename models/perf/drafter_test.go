package perf

import (
	"math"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/parallel"
)

func specRig(t *testing.T) (*llm.Model, hardware.Accelerator, hardware.Link) {
	t.Helper()
	m, err := llm.Default().Model("llama-3.1-70b")
	if err != nil {
		t.Fatal(err)
	}
	hw := hardware.Default()
	dev, err := hw.Accelerator("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	link, err := hw.Link(dev.ScaleUpLink)
	if err != nil {
		t.Fatal(err)
	}
	return m, dev, link
}

// TestVerifyStepIsDecodeOfKPlus1Tokens: a verify step of B sequences
// with k drafts each is priced as a decode step of (k+1)·B query tokens
// (every matmul row, the KV written for each, the all-reduces and CPU per
// token) whose attention reads each sequence's KV once.
func TestVerifyStepIsDecodeOfKPlus1Tokens(t *testing.T) {
	m, dev, link := specRig(t)
	r := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: parallel.Tensor(4), ScaleUp: link, StepOverheadNs: -1})
	for _, c := range []struct{ b, k, ctx int }{{1, 1, 100}, {32, 3, 2000}, {256, 2, 8000}, {64, 7, 500}} {
		B, k := c.b, c.k
		ctx := int64(B) * int64(c.ctx+1)
		pairs := int64(k)*ctx + int64(B*k*(k+1)/2)
		b := Batch{DecodeSeqs: B, DecodeContext: ctx, SpecTokens: k * B, SpecAttn: pairs}
		n := float64((k + 1) * B)
		flops := n*r.flopsPerTokRank + float64(ctx+pairs)*r.attnPerPairRank
		bytes := r.denseBytesRank + (float64(ctx)+n)*r.kvBytesRank
		gpu := max(flops*r.nsPerFLOPDecode, bytes*r.nsPerByte, r.floorNs)
		ar := n * r.arNsPerToken
		if n > r.arLargeTokens {
			ar = n * r.arLargeNs
		}
		want := gpu + ar + float64(B)*r.perSeqNs + n*r.perTokenNs + r.fixedNs
		if got := r.StepNs(&b); got != int64(math.Round(want)) {
			t.Errorf("B=%d k=%d ctx=%d: %d ns, want %.0f", B, k, c.ctx, got, want)
		}
		if plain := (Batch{DecodeSeqs: B, DecodeContext: ctx}); r.StepNs(&b) <= r.StepNs(&plain) {
			t.Errorf("B=%d k=%d: verifying costs no more than decoding", B, k)
		}
	}
}

// TestDrafterAddsItsPasses: a drafted step costs the target's step plus
// the drafter's pass over the step's tokens and k − 1 passes of one token
// per decoding sequence, each a token longer; MTP's network is one
// DeepSeek decoder layer with its projection and LM head.
func TestDrafterAddsItsPasses(t *testing.T) {
	m, dev, link := specRig(t)
	env := Env{Model: m, Device: dev, Layout: parallel.Tensor(4), ScaleUp: link}
	target := mustRoofline(t, RooflineConfig{Model: m, Device: dev, Layout: env.Layout, ScaleUp: link, StepOverheadNs: -1})
	net := *m
	net.Layers, net.ParamsTotal, net.ParamsActive = 1, 1.5e9, 1.5e9
	d, err := NewDrafter(env, &net, 3)
	if err != nil {
		t.Fatal(err)
	}
	timer := WithDrafter(target, d)
	b := Batch{DecodeSeqs: 16, DecodeContext: 16 * 1001, SpecTokens: 48, SpecAttn: 3*16*1001 + 16*6}
	want := d.net.stepNs(&b)
	for j := int64(1); j <= 2; j++ {
		want += d.net.stepNs(&Batch{DecodeSeqs: 16, DecodeContext: 16*1001 + 48 + 16*j})
	}
	if got := timer.StepNs(&b); got != target.StepNs(&b)+int64(math.Round(want)) {
		t.Errorf("drafted step %d ns, want %d + %.0f", got, target.StepNs(&b), want)
	}
	if d.net.fixedNs == target.fixedNs || d.net.perSeqNs != 0 {
		t.Errorf("the drafter pays the step's overhead or CPU again: fixed %.0f ns, per seq %.0f ns", d.net.fixedNs, d.net.perSeqNs)
	}
	if (&Batch{}).Empty() && timer.StepNs(&Batch{}) != 0 {
		t.Error("an empty step costs time")
	}
}
