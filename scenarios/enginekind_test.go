package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"handoff/models/engine"
	"handoff/results"
)

// TestEngineKindBadInput: an engine kind handoff does not know, one the
// pool's hardware cannot run, and vLLM's own rules and policies on
// another kind are each one error naming the file, line and field.
func TestEngineKindBadInput(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown kind", edit(t, "{block_size: 16}", "{kind: tgi}"),
			`t.yaml:14: field pools[0].engine.kind: unknown engine kind "tgi" (known: vllm, sglang, trtllm)`},
		{"a vLLM release on SGLang", edit(t, "{block_size: 16}", `{kind: sglang, vllm: "0.20"}`),
			"t.yaml:14: field pools[0].engine.vllm: vllm names a vLLM release; this pool runs sglang: leave it out"},
		{"a vLLM rule on TensorRT-LLM", edit(t, "{block_size: 16}", "{kind: trtllm, fenced_victim: wait}"),
			"t.yaml:14: field pools[0].engine.fenced_victim: fenced_victim is vLLM's rule for a victim whose free is " +
				"deferred (PR #49675); this pool runs trtllm, which behaves as cascade"},
		{"vLLM's admission on SGLang", edit(t, "{block_size: 16}", "{kind: sglang, admission: full_sequence}"),
			"t.yaml:14: field pools[0].engine.admission: SGLang admits by new_token_ratio only"},
		{"SGLang's admission on vLLM", edit(t, "{block_size: 16}", "{admission: new_token_ratio}"),
			`t.yaml:14: field pools[0].engine.admission: unknown rule "new_token_ratio" for vLLM (known: first_chunk, full_sequence)`},
		{"swap on SGLang", edit(t, "{block_size: 16}", "{kind: sglang}\n    preemption: swap\n    swap: {host_memory: 1GB}"),
			"t.yaml:15: field pools[0].preemption: swap is vLLM's; sglang recomputes (it retracts decodes, fewest output tokens first)"},
		{"priority on TensorRT-LLM", edit(t, "{block_size: 16}", "{kind: trtllm, scheduling_policy: priority}"),
			"t.yaml:14: field pools[0].engine.scheduling_policy: TensorRT-LLM's capacity scheduler serves requests in arrival order: fcfs only"},
		{"TensorRT-LLM on an AMD GPU", strings.Replace(edit(t, "{block_size: 16}", "{kind: trtllm}"), "hardware: h100-sxm", "hardware: mi300x", 1),
			"t.yaml:14: field pools[0].engine.kind: TensorRT-LLM runs on NVIDIA GPUs; mi300x is AMD's (cdna3)"},
		{"SGLang on Trainium", strings.Replace(edit(t, "{block_size: 16}", "{kind: sglang}"), "hardware: h100-sxm", "hardware: trainium2", 1),
			"t.yaml:14: field pools[0].engine.kind: sglang runs on GPUs; trainium2 is kind trainium"},
		{"SGLang on a wafer", waferEdit(t, "    wafer:\n", "    engine: {kind: sglang}\n    wafer:\n"),
			"field pools[1].engine.kind: a wafer pool runs its vendor's compiled runtime, not sglang: leave engine.kind out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refuses(t, tt.doc, tt.want) })
	}
}

// TestEngineKindRules: a pool's kind gives its instances the kind's
// rules, the file's admission picking TensorRT-LLM's policy, and validate
// names each pool's engine.
func TestEngineKindRules(t *testing.T) {
	tests := []struct {
		engine string
		want   engine.Rules
		name   string
	}{
		{"{kind: sglang}", engine.Rules{Admission: engine.NewTokenRatio, Retract: true}, "sglang"},
		{"{kind: trtllm}", engine.Rules{Admission: engine.ReserveOutput}, "trtllm (GUARANTEED_NO_EVICT)"},
		{"{kind: trtllm, admission: first_chunk}", engine.Rules{Admission: engine.FirstChunk}, "trtllm (MAX_UTILIZATION)"},
		{`{vllm: "0.20"}`, engine.Rules{Admission: engine.FullSequence}, "vllm 0.20"},
	}
	for _, tt := range tests {
		t.Run(tt.engine, func(t *testing.T) {
			_, b, err := parseBuild(t, edit(t, "{block_size: 16}", tt.engine), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Config.Instances[0].Engine.Rules; got != tt.want {
				t.Errorf("rules %+v, want %+v", got, tt.want)
			}
			if line := b.KVCapacity()[0]; !strings.HasPrefix(line, "pool prefill, "+tt.name+": ") {
				t.Errorf("validate says %q, want the engine %q", line, tt.name)
			}
		})
	}
}

// TestEnginesCompared runs the shipped engines-compared scenario under
// each engine kind: each run twice, alike; every request completes; and
// the kinds part as docs/ENGINES.md explains — TensorRT-LLM's
// GUARANTEED_NO_EVICT never evicts, and pays in queueing for it, SGLang
// retracts far fewer requests than vLLM preempts, and MAX_UTILIZATION
// preempts as vLLM does.
func TestEnginesCompared(t *testing.T) {
	type run struct{ preemptions, p50TTFTms int64 }
	runs := map[string]run{}
	for _, kind := range []string{"vllm", "sglang", "trtllm", "trtllm:first_chunk"} {
		name, admission, _ := strings.Cut(kind, ":")
		sets := []string{"pools.chat.engine.kind=" + name}
		if admission != "" {
			sets = append(sets, "pools.chat.engine.admission="+admission)
		}
		l, err := Load("engines-compared.yaml", mustSets(t, sets...)...)
		a, _ := runLoaded(t, l, err)
		b, _ := runLoaded(t, l, err)
		if fmt.Sprint(a.Records, a.Instances) != fmt.Sprint(b.Records, b.Instances) {
			t.Fatalf("%s: two runs differ", kind)
		}
		ttfts := make([]int64, 0, len(a.Records))
		for _, r := range a.Records {
			if r.Status != results.Completed {
				t.Fatalf("%s: request %d ended %v (%s)", kind, r.ID, r.Status, r.Reason)
			}
			ttfts = append(ttfts, (r.FirstTokenNs-r.ArrivalNs)/1e6)
		}
		slices.Sort(ttfts)
		runs[kind] = run{a.Instances[0].Stats.Preemptions, ttfts[len(ttfts)/2]}
	}
	vllm, sgl, gne, mu := runs["vllm"], runs["sglang"], runs["trtllm"], runs["trtllm:first_chunk"]
	switch {
	case vllm.preemptions < 100:
		t.Errorf("vLLM preempted %d times: the scenario should put it under KV pressure", vllm.preemptions)
	case gne.preemptions != 0 || gne.p50TTFTms < 10*vllm.p50TTFTms:
		t.Errorf("GUARANTEED_NO_EVICT: %d preemptions, TTFT p50 %d ms (vLLM's %d ms): want none, and queueing for it",
			gne.preemptions, gne.p50TTFTms, vllm.p50TTFTms)
	case sgl.preemptions*10 > vllm.preemptions:
		t.Errorf("SGLang retracted %d times, vLLM preempted %d: want a tenth or fewer", sgl.preemptions, vllm.preemptions)
	case mu.preemptions < vllm.preemptions*9/10:
		t.Errorf("MAX_UTILIZATION preempted %d times, vLLM %d: want about as many", mu.preemptions, vllm.preemptions)
	}
	t.Logf("%+v", runs)
}
