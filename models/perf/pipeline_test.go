package perf

import (
	"math"
	"testing"

	"handoff/hardware"
	"handoff/models/parallel"
)

// TestPipelineOneMicroBatchByHand prices one decode micro-batch of
// Llama-3.1-8B (32 layers) at pp 2, TP 1, by hand: each stage runs 16
// layers, half the parameters and half the KV per token, so for one
// sequence at context 1000 a stage reads 8.03e9 + 65,536·1001 =
// 8,095,601,536 B → / 2.68e12 B/s = 3.020747 ms, + the 2 ms overhead each
// stage pays; the hop sends 2 tensors × 4096 × 2 B = 16,384 B for the one
// token over a 50 GB/s, 5 µs link: 5000 + 327.68 ns.
func TestPipelineOneMicroBatchByHand(t *testing.T) {
	m := llama31_8B()
	stage := mustRoofline(t, RooflineConfig{Model: m.Stage(16), Device: testH100(), Layout: parallel.Tensor(1),
		StepOverheadNs: -1})
	link := hardware.Link{Name: "test-ib", BandwidthBps: 50e9, LatencyNs: 5000}
	hop := Hop{LatencyNs: link.LatencyNs, NsPerToken: ActivationBytesPerToken(m.Hidden, 1) * 1e9 / link.BandwidthBps}
	p, err := NewPipeline([]StepTimer{stage, stage}, []Hop{hop})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{DecodeSeqs: 1, DecodeContext: 1000}
	stageNs := 8_095_601_536/2.68e12*1e9 + 2e6
	if got := p.StageNs(&b, 0); math.Abs(float64(got)-stageNs) > 1 {
		t.Errorf("stage = %d ns, want %.0f", got, stageNs)
	}
	if got := p.HopNs(&b, 0); got != 5328 {
		t.Errorf("hop = %d ns, want 5000 + 327.68 rounded, 5328", got)
	}
	want := 2*stageNs + 5327.68
	if got := p.StepNs(&b); math.Abs(float64(got)-want) > 2 {
		t.Errorf("micro-batch alone = %d ns, want %.0f", got, want)
	}
	if got := p.StepNs(&Batch{}); got != 0 {
		t.Errorf("empty micro-batch = %d ns, want 0", got)
	}
}

// TestPipelineNeedsAHopPerBoundary: n stages take n − 1 hops.
func TestPipelineNeedsAHopPerBoundary(t *testing.T) {
	s := StepTimerFunc(func(*Batch) int64 { return 1 })
	if _, err := NewPipeline([]StepTimer{s, s, s}, []Hop{{}}); err == nil {
		t.Error("three stages with one hop: want an error")
	}
	if _, err := NewPipeline([]StepTimer{s}, nil); err == nil {
		t.Error("one stage: want an error")
	}
	if _, err := NewPipeline([]StepTimer{s, s}, []Hop{{LatencyNs: -1}}); err == nil {
		t.Error("negative latency: want an error")
	}
}
