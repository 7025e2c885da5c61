package scenarios

import (
	"fmt"
	"strings"

	"handoff/hardware"

	"handoff/models/strictyaml"
)

// Defaults, in one place. Engine limits follow vLLM V1's defaults for an
// online server.
const (
	defaultSeed              = 1
	defaultAttainment        = 0.9
	defaultBatchedTokens     = 8192 // hardware vLLM does not size (wafers, LPUs); see batchDefaults
	defaultMaxSeqs           = 256
	defaultBlockSize         = 16
	defaultMemoryUtilization = 0.9
	defaultLink              = "nvlink4"
	defaultRouter            = "round_robin"
	defaultPreemption        = "recompute"
	defaultStepTime          = "roofline"
	defaultRateScale         = 1
	defaultLockupNs          = 1e9  // 1 s without progress: a lock-up
	defaultLockupAbortNs     = 60e9 // 60 s locked up, of any kind: its requests fail
	defaultRejectPhase       = 1
	defaultHostLink          = "pcie-gen5-x16"
	defaultRemoteKVQueue     = "separate"
)

// applyDefaults fills every field left out of the file (absent or null).
// A field written out, even as 0 or "", is kept and validated: an explicit
// `count: 0` is an error, not one instance.
func (l *Loaded) applyDefaults() {
	s := &l.Scenario
	fill(l, "seed", &s.Seed, defaultSeed)
	fill(l, "slo.attainment", &s.SLO.Attainment, defaultAttainment)
	fill(l, "workload.rate_scale", &s.Workload.RateScale, defaultRateScale)
	l.classDefaults()
	if s.Topology == nil {
		fill(l, "link.kind", &s.Link.Kind, defaultLink)
	}
	fill(l, "router.policy", &s.Router.Policy, defaultRouter)
	l.routerDefaults()
	fill(l, "metrics.lockup_threshold", &s.Metrics.LockupThreshold, defaultLockupNs)
	fill(l, "metrics.lockup_abort", &s.Metrics.LockupAbort, defaultLockupAbortNs)
	for i := range s.Pools {
		l.poolDefaults(fmt.Sprintf("pools[%d].", i), &s.Pools[i])
	}
	l.topologyDefaults()
}

func (l *Loaded) poolDefaults(at string, p *Pool) {
	if p.Reject != nil {
		fill(l, at+"reject.phase", &p.Reject.Phase, defaultRejectPhase)
	}
	fill(l, at+"role", &p.Role, "colocated")
	fill(l, at+"count", &p.Count, 1)
	fill(l, at+"tp", &p.TP, 1)
	fill(l, at+"dp", &p.DP, 1)
	fill(l, at+"ep", &p.EP, 1)
	fill(l, at+"pp", &p.PP, 1)
	fill(l, at+"dp_routing", &p.DPRouting, "balancer")
	if p.Wafer != nil {
		l.waferDefaults(at, p)
	}
	if p.Autoscale != nil {
		autoscaleDefaults(p.Autoscale)
	}
	fill(l, at+"preemption", &p.Preemption, defaultPreemption)
	fill(l, at+"kv_handoff", &p.KVHandoff, "direct")
	fill(l, at+"step_time.model", &p.StepTime.Model, defaultStepTime)
	l.releaseDefaults(at+"engine.", p)
	l.handoffDefaults(at, p)
	e := &p.Engine
	at += "engine."
	seqs, tokens := l.batchDefaults(p.Hardware)
	fill(l, at+"max_num_batched_tokens", &e.MaxNumBatchedTokens, tokens)
	fill(l, at+"max_num_seqs", &e.MaxNumSeqs, seqs)
	fill(l, at+"block_size", &e.BlockSize, defaultBlockSize)
	fill(l, at+"memory_utilization", &e.MemoryUtilization, defaultMemoryUtilization)
	if e.PrefixCaching == nil {
		e.PrefixCaching = ptr(true)
	}
	if e.ChunkedPrefill == nil {
		e.ChunkedPrefill = ptr(true)
	}
}

// defaultList returns the items a list field of the scenario holds when
// the file leaves it out, or nil when it has none; schema is the field's
// path without list items ("router.llmd.scorers"). --set reaches into such
// a list by item name before the defaults are applied.
func defaultList(schema string) any {
	switch schema {
	case "router.llmd.scorers":
		return defaultScorers()
	}
	return nil
}

// batchDefaults returns vLLM's default max_num_seqs and
// max_num_batched_tokens for an online server on the named accelerator,
// as vLLM's EngineArgs.get_batch_defaults chooses them
// (vllm/engine/arg_utils.py): 1024 sequences and 8192 tokens on a device
// of at least 70 GiB that is not an A100, else 256 and 2048. Accelerators
// vLLM does not run (wafers, LPUs) keep 256 and 8192; so does a name no
// catalog knows (Build reports it).
func (l *Loaded) batchDefaults(name string) (seqs, tokens int) {
	if l.hw == nil {
		hw, _, err := l.catalogs()
		if err != nil {
			return defaultMaxSeqs, defaultBatchedTokens
		}
		l.hw = hw
	}
	dev, err := l.hw.Accelerator(name)
	switch {
	case err != nil || dev.Kind == hardware.KindWafer || dev.Kind == hardware.KindLPU:
		return defaultMaxSeqs, defaultBatchedTokens
	case dev.MemoryBytes >= 70<<30 && !strings.Contains(strings.ToLower(dev.Name), "a100"):
		return 1024, 8192
	}
	return 256, 2048
}

// fill sets *field to def when the field is zero and the document does not
// write it (or writes null).
func fill[T comparable](l *Loaded, path string, field *T, def T) {
	var zero T
	if *field != zero {
		return
	}
	if n := strictyaml.Find(l.root, path); n == nil || n.Tag == "!!null" {
		*field = def
	}
}

func ptr[T any](v T) *T { return &v }
