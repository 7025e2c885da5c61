package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"handoff/hardware"
	"handoff/models/engine"
)

// Engine kinds. A pool's engine.kind names the serving engine its
// instances run: vllm (the default; engine.vllm names its release),
// sglang or trtllm (engine.Preset). The kinds share handoff's engine and
// differ in its rules, so a non-vLLM pool takes its kind's rules and
// refuses, by field, those that are vLLM's alone. A wafer pool runs its
// vendor's compiled runtime and names no kind.

// engineKinds are the kinds' names, which validation and the swarm read.
var engineKinds = engine.Kinds()

// vllmOnlyRules are the engine fields that set a rule only vLLM has,
// each with why, its value in a pool and the value the other kinds
// behave as (which a file may state: an effective scenario writes it).
var vllmOnlyRules = []struct {
	field, why string
	value      func(e *Engine) string
	theirs     string
}{
	{"vllm", "names a vLLM release", func(e *Engine) string { return e.VLLM }, ""},
	{"remote_kv_queue", "is vLLM's queue for requests waiting on remote KV",
		func(e *Engine) string { return e.RemoteKVQueue }, "separate"},
	{"reserve_inflight", "is vLLM's reservation for prefills in flight (PR #44560)",
		func(e *Engine) string { return fmt.Sprint(*e.ReserveInflight) }, "false"},
	{"deferred_free", "is vLLM's deferred free under asynchronous scheduling (PR #45357)",
		func(e *Engine) string { return fmt.Sprint(*e.DeferredFree) }, "false"},
	{"fenced_victim", "is vLLM's rule for a victim whose free is deferred (PR #49675)",
		func(e *Engine) string { return e.FencedVictim }, engine.Cascade.String()},
	{"watermark", "is vLLM's admission watermark (PR #44594)",
		func(e *Engine) string { return fmt.Sprint(*e.Watermark) }, "0"},
	{"hybrid_kv_with_connector", "is vLLM's hybrid KV cache manager beside its connector",
		func(e *Engine) string { return fmt.Sprint(*e.HybridKVWithConnector) }, "true"},
}

// kindRelease is the preset of a non-vLLM pool's kind and admission; a
// kind or admission validation will refuse yields SGLang's.
func kindRelease(e *Engine) engine.Release {
	k, err := engine.ParseKind(e.Kind)
	if err == nil {
		if r, err := engine.Preset(k, e.Admission); err == nil {
			return r
		}
	}
	r, _ := engine.Preset(engine.KindSGLang, "")
	return r
}

// kindDefaults fills the engine fields of a non-vLLM pool p (at
// "pools[i].engine.") from its kind's preset.
func (l *Loaded) kindDefaults(at string, p *Pool) {
	e := &p.Engine
	r := kindRelease(e)
	fill(l, at+"admission", &e.Admission, r.Rules.Admission.String())
	fill(l, at+"remote_kv_queue", &e.RemoteKVQueue, "separate")
	e.AsyncScheduling = orDefaultPtr(e.AsyncScheduling, r.AsyncScheduling)
	e.ReserveInflight = orDefaultPtr(e.ReserveInflight, false)
	e.DeferredFree = orDefaultPtr(e.DeferredFree, false)
	fill(l, at+"fenced_victim", &e.FencedVictim, engine.Cascade.String()) // moot without deferred frees
	e.Watermark = orDefaultPtr(e.Watermark, 0.0)
	e.HybridKVWithConnector = orDefaultPtr(e.HybridKVWithConnector, true)
}

// validateKind checks a pool's engine kind (at "pools[i].engine"): one
// handoff knows, one the pool's hardware runs, and for SGLang and
// TensorRT-LLM no rule that is vLLM's alone and no policy they lack.
// It reports done when the kind is not vLLM: the release checks do not
// apply.
func (l *Loaded) validateKind(at string, p *Pool) (done bool, err error) {
	e := &p.Engine
	switch {
	case p.Wafer != nil && l.given(at+".kind"):
		return true, l.errorf(at+".kind", "a wafer pool runs its vendor's compiled runtime, not %s: leave engine.kind out", e.Kind)
	case p.Wafer != nil || e.Kind == engine.KindVLLM.String():
		return false, nil
	case !slices.Contains(engineKinds, e.Kind):
		return true, l.errorf(at+".kind", "unknown engine kind %q (known: %s)", e.Kind, strings.Join(engineKinds, ", "))
	}
	for _, r := range vllmOnlyRules {
		switch v := r.value(e); {
		case v != r.theirs && r.theirs == "":
			return true, l.errorf(at+"."+r.field, "%s %s; this pool runs %s: leave it out", r.field, r.why, e.Kind)
		case v != r.theirs:
			return true, l.errorf(at+"."+r.field, "%s %s; this pool runs %s, which behaves as %s", r.field, r.why,
				e.Kind, r.theirs)
		}
	}
	k, _ := engine.ParseKind(e.Kind)
	if _, err := engine.Preset(k, e.Admission); err != nil {
		return true, l.errorf(at+".admission", "%v", err)
	}
	pool := strings.TrimSuffix(at, ".engine")
	switch {
	case p.Preemption != "recompute":
		return true, l.errorf(pool+".preemption", "%s is vLLM's; %s recomputes (%s)", p.Preemption, e.Kind, kindVictims(k))
	case k == engine.KindTRTLLM && e.SchedulingPolicy == "priority":
		return true, l.errorf(at+".scheduling_policy", "TensorRT-LLM's capacity scheduler serves requests in arrival order: fcfs only")
	}
	return true, nil
}

// checkKindHardware checks that the pool's hardware (dev) runs its
// engine kind: SGLang runs on GPUs (NVIDIA's and AMD's), TensorRT-LLM on
// NVIDIA's alone; neither on Trainium or an LPU (wafers take no kind at
// all: validateKind). A GPU whose architecture the catalog does not name
// is taken at its word.
func (l *Loaded) checkKindHardware(at string, p *Pool, dev hardware.Accelerator) error {
	k := p.Engine.Kind
	amd := dev.Arch == hardware.ArchCDNA3 || dev.Arch == hardware.ArchCDNA4
	switch {
	case p.Wafer != nil || k == engine.KindVLLM.String():
		return nil
	case dev.Kind != hardware.KindGPU:
		return l.errorf(at+".engine.kind", "%s runs on GPUs; %s is kind %s", k, dev.Name, dev.Kind)
	case k == engine.KindTRTLLM.String() && amd:
		return l.errorf(at+".engine.kind", "TensorRT-LLM runs on NVIDIA GPUs; %s is AMD's (%s)", dev.Name, dev.Arch)
	}
	return nil
}

// kindVictims says what a kind does when a running request runs out of KV.
func kindVictims(k engine.Kind) string {
	if k == engine.KindSGLang {
		return "it retracts decodes, fewest output tokens first"
	}
	return "GUARANTEED_NO_EVICT never evicts; MAX_UTILIZATION pauses the last started"
}

// engineName says which engine a pool runs: its kind and release
// ("vllm 0.33", "sglang"), or a wafer's runtime.
func (p *Pool) engineName() string {
	switch {
	case p.Wafer != nil:
		return "its wafer runtime"
	case p.Engine.Kind == engine.KindTRTLLM.String():
		policy := "GUARANTEED_NO_EVICT"
		if p.Engine.Admission == engine.FirstChunk.String() {
			policy = "MAX_UTILIZATION"
		}
		return fmt.Sprintf("trtllm (%s)", policy)
	case p.Engine.Kind != engine.KindVLLM.String():
		return p.Engine.Kind
	}
	r := p.release()
	if p.Engine.VLLM == engine.Latest {
		return fmt.Sprintf("vllm %s (%s)", engine.Latest, r.Version)
	}
	return "vllm " + r.Version
}
