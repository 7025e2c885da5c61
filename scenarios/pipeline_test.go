package scenarios

import (
	"math"
	"strings"
	"testing"

	"handoff/models/llm"
	"handoff/models/parallel"
	"handoff/models/perf"
)

// ppDoc is minimal's pool serving Llama-3.1-70B with the given extra pool
// lines.
func ppDoc(lines string) string {
	return strings.Replace(minimal, "model: llama-3.1-8b", "model: llama-3.1-70b", 1) + lines
}

// buildErr parses and builds doc, returning the first error.
func buildErr(doc string) error {
	l, err := Parse([]byte(doc), "m.yaml")
	if err != nil {
		return err
	}
	_, err = l.Build()
	return err
}

// TestPipelineBadInput: one error naming the file, line and field for a
// pp out of range, deeper than the layers, on a wafer, with a measured
// step-time profile, or whose instance a topology's domain cannot hold;
// a pp that does not divide the layers is split as vLLM splits it.
func TestPipelineBadInput(t *testing.T) {
	for doc, want := range map[string]string{
		ppDoc("    pp: 0\n"):             "m.yaml:13: field pools[0].pp: must be in [1, 64], got 0",
		ppDoc("    pp: 65\n"):            "m.yaml:13: field pools[0].pp: must be in [1, 64], got 65",
		ppDoc("    tp: 1\n    pp: 64\n"): "",
		strings.Replace(ppDoc("    pp: 33\n"), "llama-3.1-70b", "llama-3.1-8b", 1):                                                                                   "m.yaml:13: field pools[0].pp: pp 33 exceeds llama-3.1-8b's 32 layers",
		ppDoc("    pp: 2\n    step_time: {model: polynomial, file: x.json}\n"):                                                                                       "m.yaml:14: field pools[0].step_time.model: pp 2 prices each stage",
		ppDoc("    tp: 8\n    pp: 2\n    placement: {rule: pack}\ntopology: {domain_link: nvlink4, node_link: ib-ndr, datacenter_link: tcp-100g, domain_size: 8}\n"): "m.yaml:14: field pools[0].pp: an instance of pp 2 × tp 8 = 16 GPUs does not fit in a domain of 8",
		ppDoc("    tp: 16\n    pp: 2\n"):                                             "m.yaml:13: field pools[0].tp: tp 16 spans more than one scale-up domain",
		strings.Replace(ppDoc("    tp: 8\n    pp: 2\n"), "h100-sxm", "a100-80gb", 1): "m.yaml:14: field pools[0].pp: pp 2 × tp 8 = 16 devices span more than one scale-up domain of a100-80gb",
		ppDoc("    pp: 2\n    preemption: swap\n    swap: {host_memory: 1GB}\n"):     "m.yaml:14: field pools[0].preemption: swap with pp > 1 is not modelled",
	} {
		err := buildErr(doc)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "pools[0].pp") {
				continue // 64 stages over 80 layers: legal (and too large a KV block per stage is another matter)
			}
			t.Errorf("doc\n%s: %v, want it to build", doc, err)
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("doc\n%s: error %v, want %q", doc, err, want)
		}
	}
}

// TestPipelineAcrossNodesBuilds: Llama-3.1-70B at tp 8 × pp 2 on H100s
// (eight to a domain) is two stages of 40 layers, one node each, joined
// by the H100's scale-out NIC (cx7-400g: 50 GB/s, 2 µs); each stage is
// the roofline over half the model, and a micro-batch alone takes both
// stages plus the hop of 2·2·8192/8 = 4096 B per token.
func TestPipelineAcrossNodesBuilds(t *testing.T) {
	l, err := Parse([]byte(ppDoc("    tp: 8\n    pp: 2\n")), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	in := b.Config.Instances[0]
	if in.GPUs != 16 || in.Engine.Stages != 2 || in.Engine.AsyncScheduling || in.Pipeline == nil || b.GPUs != 16 {
		t.Fatalf("instance %d GPUs, %d stages, async %v, pipeline %v; built %d GPUs", in.GPUs, in.Engine.Stages,
			in.Engine.AsyncScheduling, in.Pipeline != nil, b.GPUs)
	}
	m, _ := llm.Default().Model("llama-3.1-70b")
	hw, _, err := l.catalogs()
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := hw.Accelerator("h100-sxm")
	link, _ := hw.Link(dev.ScaleUpLink)
	stage, err := perf.NewRoofline(perf.RooflineConfig{Model: m.Stage(40), Device: dev, Layout: parallel.Tensor(8),
		ScaleUp: link, StepOverheadNs: -1, OverlapCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	batch := perf.Batch{DecodeSeqs: 16, DecodeContext: 16 * 2000}
	hop := 2000 + math.Round(16*4096*1e9/50e9)
	want := 2*stage.StepNs(&batch) + int64(hop)
	if got := in.Pipeline.StepNs(&batch); got != want {
		t.Errorf("a micro-batch alone takes %d ns, want two stages of %d and a hop of %.0f: %d", got,
			stage.StepNs(&batch), hop, want)
	}
	// The KV pool is sized by a stage's share: half the weights, half the KV per token.
	whole := parallel.Tensor(8).Memory(m, dev.MemoryBytes, 0.9, 16)
	if got := in.Engine.NumBlocks; got <= int(whole.Blocks) {
		t.Errorf("%d blocks at pp 2, want more than the %d of one tp 8 instance", got, int(whole.Blocks))
	}
}

// TestPipelineMoEUnevenStages: Qwen3-235B-A22B's 94 layers over pp 3 are
// 31, 32, 31 as vLLM splits them; the pool's KV blocks are the 32-layer
// stage's, the fewest, and its experts are split with the layers.
func TestPipelineMoEUnevenStages(t *testing.T) {
	doc := strings.Replace(minimal, "model: llama-3.1-8b", "model: qwen3-235b-a22b", 1) + "    tp: 4\n    pp: 3\n"
	l, err := Parse([]byte(doc), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := llm.Default().Model("qwen3-235b-a22b")
	lay := parallel.Layout{TP: 4, DP: 1, EP: 1, PP: 3}
	if got := lay.StageLayers(m); got[0] != 31 || got[1] != 32 || got[2] != 31 {
		t.Fatalf("stages %v, want [31 32 31]", got)
	}
	mem := lay.Memory(m, 80e9, 0.9, 16)
	in := b.Config.Instances[0]
	if in.Engine.NumBlocks != int(mem.Blocks) || in.GPUs != 12 || in.Pipeline.Stages() != 3 {
		t.Errorf("%d blocks on %d GPUs over %d stages, want the 32-layer stage's %d on 12 over 3",
			in.Engine.NumBlocks, in.GPUs, in.Pipeline.Stages(), int(mem.Blocks))
	}
	if e := m.Stage(32).ExpertParams(); math.Abs(e-m.ExpertParams()*32/94) > 1 {
		t.Errorf("a 32-layer stage holds %g expert parameters, want 32/94 of %g", e, m.ExpertParams())
	}
}
