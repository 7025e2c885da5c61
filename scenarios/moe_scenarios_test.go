package scenarios

import (
	"math"
	"testing"

	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/perf"
)

// wideEPStep prices one decode step of the shipped scenario file's decode
// group, every one of its ranks running batch sequences of ctx tokens of
// context, under the overrides sets.
func wideEPStep(t *testing.T, file string, batch int, ctx int64, sets ...string) int64 {
	t.Helper()
	var ss []Set
	for _, s := range sets {
		set, err := ParseSet(s)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, set)
	}
	l, err := Load(file, ss...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, in := range b.Config.Instances {
		if in.Name != "decode-0-dp0" {
			continue
		}
		ranks := make([]*perf.Batch, in.DPRanks)
		for r := range ranks {
			ranks[r] = &perf.Batch{DecodeSeqs: batch, DecodeContext: int64(batch) * ctx}
		}
		return in.Timer.(perf.GroupTimer).GroupStepNs(ranks)
	}
	t.Fatalf("%s: no decode-0-dp0", file)
	return 0
}

// TestWideEPAllToAll: in the shipped wide-EP scenarios the all-to-all is
// what separates the fleets: the H200 group whose dispatch and combine
// cross ConnectX-7 steps slower than the same devices in one NVLink domain,
// by more at a larger batch (the traffic is per token), and less with a
// NIC twice as fast; GB200's NVL72 group steps faster than the same rack cut
// into 8-GPU domains.
func TestWideEPAllToAll(t *testing.T) {
	const h200, gb200 = "deepseek-r1-wide-ep-h200-ib.yaml", "deepseek-r1-wide-ep-gb200.yaml"
	var nicCost [2]int64
	for i, batch := range []int{8, 64} {
		ib := wideEPStep(t, h200, batch, 4000)
		nvl := wideEPStep(t, h200, batch, 4000, "topology.domain_size=32")
		fast := wideEPStep(t, h200, batch, 4000, "topology.node_link=cx8-800g")
		rack := wideEPStep(t, gb200, batch, 4000)
		boxes := wideEPStep(t, gb200, batch, 4000, "topology.domain_size=8")
		t.Logf("batch %d per rank: h200 IB %.2f ms, 800G NIC %.2f, one NVLink domain %.2f; gb200 NVL72 %.2f, 8-GPU domains %.2f",
			batch, ms(ib), ms(fast), ms(nvl), ms(rack), ms(boxes))
		if !(nvl < fast && fast < ib) {
			t.Errorf("batch %d: h200 steps: one domain %d ns, 800G %d, 400G %d: want increasing", batch, nvl, fast, ib)
		}
		if !(rack < boxes) {
			t.Errorf("batch %d: gb200 NVL72 step %d ns, not below 8-GPU domains' %d", batch, rack, boxes)
		}
		nicCost[i] = ib - nvl
	}
	if !(nicCost[1] > 4*nicCost[0]) {
		t.Errorf("the NIC's cost at batch 64 (%d ns) is not well above batch 8's (%d ns)", nicCost[1], nicCost[0])
	}
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// TestReleasePicksMoEKernel: a pool's vLLM release reaches its step model.
// gpt-oss-120b on H100 runs Marlin under vLLM 0.11, which stores each
// MXFP4 expert with the hidden width 2880 padded to 3072 and the
// intermediate to 2944, and triton_kernels' matmul_ogs from 0.12, which
// pads nothing at TP 1: with the same scheduling, a decode step of one
// sequence reads its 4 experts' 9.04% more bytes under 0.11, and nothing
// else differs.
func TestReleasePicksMoEKernel(t *testing.T) {
	step := func(release string) int64 {
		t.Helper()
		l, err := Load("quickstart.yaml", Set{Path: "model", Value: "gpt-oss-120b"},
			Set{Path: "pools.prefill.engine.vllm", Value: release}, Set{Path: "pools.decode.engine.vllm", Value: release},
			Set{Path: "pools.decode.engine.async_scheduling", Value: "false"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Build()
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for _, in := range b.Config.Instances {
			if in.Pool == "decode" {
				return in.Timer.StepNs(&perf.Batch{DecodeSeqs: 1, DecodeContext: 1000})
			}
		}
		t.Fatal("no decode instance")
		return 0
	}
	marlin, triton := step("0.11"), step("latest")
	t.Logf("gpt-oss-120b batch-1 decode on h100-sxm: %.3f ms under vLLM 0.11 (Marlin), %.3f ms latest (matmul_ogs)",
		ms(marlin), ms(triton))
	m, err := llm.Default().Model("gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := hardware.Default().Accelerator("h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	extra := 4 * m.ExpertBytesTotal() / 128 * (2944.0*3072/(2880*2880) - 1)
	mbu := dev.MBU // both kernels are weight-only: the experts at the accelerator's weight-only share
	if e := dev.Serving.WeightOnlyMoEMBU; e > 0 {
		mbu = e
	}
	if got, want := float64(marlin-triton), extra/(dev.MemoryBandwidthBps*mbu)*1e9; math.Abs(got-want) > 2 {
		t.Errorf("vLLM 0.11 step − latest = %.0f ns, want Marlin's padding, %.0f ns", got, want)
	}
}
