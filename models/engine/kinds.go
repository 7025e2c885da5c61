package engine

import (
	"fmt"
	"strings"
)

// Kind is the serving engine a pool runs. The kinds share one instance —
// its step, KV pool, running and waiting sets and cruising — and differ
// only in the Rules it consults (rules.go): vLLM's by release (vllm.go),
// SGLang's (sglang.go) and TensorRT-LLM's (trtllm.go).
type Kind uint8

// The engine kinds.
const (
	KindVLLM Kind = iota
	KindSGLang
	KindTRTLLM
)

var kindNames = [...]string{"vllm", "sglang", "trtllm"}

// String names the kind as scenarios do.
func (k Kind) String() string { return kindNames[k] }

// Kinds lists the kinds' names, vLLM first.
func Kinds() []string { return kindNames[:] }

// ParseKind returns the kind named name, or an error naming the kinds.
func ParseKind(name string) (Kind, error) {
	for i, n := range kindNames {
		if n == name {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown engine kind %q (known: %s)", name, strings.Join(Kinds(), ", "))
}

// Preset is the release of a kind other than vLLM (whose releases are
// VLLM's): SGLang's, or TensorRT-LLM's under its capacity scheduler
// policy, given as the admission rule it stands for (ReserveOutput for
// GUARANTEED_NO_EVICT, FirstChunk for MAX_UTILIZATION; "" is the
// default, GUARANTEED_NO_EVICT). Both engines overlap scheduling with
// the step in flight by default (SGLang's overlap scheduler,
// TensorRT-LLM's PyTorch backend unless disable_overlap_scheduler), which
// AsyncScheduling models. Their connectors are not modelled apart from
// vLLM's: a prefill or decode pool takes the newest vLLM's.
func Preset(k Kind, admission string) (Release, error) {
	latest, _ := VLLM(Latest)
	r := Release{Engine: k.String(), Version: Latest, AsyncScheduling: true, HybridKV: true, Connector: latest.Connector}
	switch k {
	case KindSGLang:
		if admission != "" && admission != NewTokenRatio.String() {
			return Release{}, fmt.Errorf("SGLang admits by %s only", NewTokenRatio)
		}
		r.Rules = Rules{Admission: NewTokenRatio, Retract: true}
	case KindTRTLLM:
		switch admission {
		case "", ReserveOutput.String():
			r.Rules.Admission = ReserveOutput
		case FirstChunk.String():
			r.Rules.Admission = FirstChunk
		default:
			return Release{}, fmt.Errorf("TensorRT-LLM's capacity scheduler admits by %s (GUARANTEED_NO_EVICT) or %s "+
				"(MAX_UTILIZATION)", ReserveOutput, FirstChunk)
		}
	default:
		return VLLM(Latest)
	}
	return r, nil
}

// KindSummary is one engine kind's rules in words, with where they live
// upstream: what `handoff catalog engines` prints.
type KindSummary struct {
	Kind      Kind
	Admission string // the admission rules, as engine.admission names them
	OutOfKV   string // what a running request short of a block does
	Requeue   string // where a request it puts back waits
	Source    string
}

// KindSummaries describe every kind, vLLM first.
func KindSummaries() []KindSummary {
	return []KindSummary{
		{KindVLLM, "engine.vllm's release: first_chunk or full_sequence", "preempt the last admitted; it recomputes",
			"front of the waiting queue", "vllm/v1/core/sched/scheduler.py Scheduler.schedule"},
		{KindSGLang, "new_token_ratio", "before the step, retract decodes, fewest output tokens first; their output KV is dropped",
			"back of the waiting queue", "python/sglang/srt/managers/schedule_policy.py PrefillAdder, schedule_batch.py ScheduleBatch.retract_decode"},
		{KindTRTLLM, "reserve_output (GUARANTEED_NO_EVICT, default) or first_chunk (MAX_UTILIZATION)",
			"never (reserve_output); pause the last started (first_chunk)", "front of the waiting queue",
			"cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp GuaranteedNoEvictScheduler, MaxUtilizationScheduler"},
	}
}
