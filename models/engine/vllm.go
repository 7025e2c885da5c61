package engine

import "fmt"

// vllmRules are the settings that changed between vLLM releases (from
// v0.10 on), each step citing the pull request that changed it; a release
// is the first whose date follows the merge (its notes say so, or the
// merge date does where they do not). The scheduler is
// vllm/v1/core/sched/scheduler.py, the KV manager
// vllm/v1/core/kv_cache_manager.py, the NIXL connector
// vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py.
var vllmRules = []ReleaseRule{
	{
		Field:  "engine.admission",
		Source: "KVCacheManager.allocate_slots(full_sequence_must_fit), SchedulerConfig.scheduler_reserve_full_isl",
		Steps: []RuleStep{
			{From: "0.10", Value: "first_chunk", Allowed: []string{"first_chunk"}, Change: "the waiting loop allocates the first chunk",
				apply: func(r *Release) { r.Rules.Admission = FirstChunk }},
			{From: "0.19", Value: "full_sequence", Allowed: []string{"full_sequence", "first_chunk"}, Change: "PR #37307",
				apply: func(r *Release) { r.Rules.Admission = FullSequence }},
		},
	},
	{
		Field:  "engine.remote_kv_queue",
		Source: "Scheduler.skipped_waiting, _select_waiting_queue_for_scheduling",
		Steps: []RuleStep{
			{From: "0.10", Value: "shared", Allowed: []string{"shared"}, Change: "requests waiting for remote KV stay in the waiting queue",
				apply: func(r *Release) { r.Rules.SharedQueue = true }},
			{From: "0.18", Value: "separate", Allowed: []string{"separate"}, Change: "PR #35781",
				apply: func(r *Release) { r.Rules.SharedQueue = false }},
		},
	},
	{
		Field:  "engine.async_scheduling",
		Source: "AsyncScheduler (vllm/v1/core/sched/async_scheduler.py), EngineCore.step_with_batch_queue",
		Steps: []RuleStep{
			{From: "0.10", Value: "false", Allowed: []string{"false", "true"}, Change: "PR #19970, experimental behind --async-scheduling",
				apply: func(r *Release) { r.AsyncScheduling = false }},
			{From: "0.14", Value: "true", Allowed: []string{"true", "false"}, Change: "PR #27614",
				apply: func(r *Release) { r.AsyncScheduling = true }},
		},
	},
	{
		Field:  "engine.hybrid_kv_with_connector",
		Source: "VllmConfig.__post_init__ (scheduler_config.disable_hybrid_kv_cache_manager), unify_hybrid_kv_cache_specs in vllm/v1/core/kv_cache_utils.py",
		Steps: []RuleStep{
			{From: "0.10", Value: "false", Allowed: []string{"false"}, Change: "a kv_transfer_config turns the hybrid KV cache manager off: every layer keeps full KV",
				apply: func(r *Release) { r.HybridKV = false }},
			{From: "0.18", Value: "false", Allowed: []string{"false", "true"}, Change: "PR #35758, NixlConnector keeps it with --no-disable-hybrid-kv-cache-manager",
				apply: func(r *Release) { r.HybridKV = false }},
			{From: "0.23", Value: "true", Allowed: []string{"true", "false"}, Change: "PR #41847",
				apply: func(r *Release) { r.HybridKV = true }},
		},
	},
	{
		Field:  "engine.reserve_inflight",
		Source: "Scheduler._inflight_prefill_reserved_blocks, allocate_slots(reserved_blocks)",
		Steps: []RuleStep{
			{From: "0.10", Value: "false", Allowed: []string{"false"}, Change: "an async load needs only its own blocks free",
				apply: func(r *Release) { r.Rules.ReserveInflight = false }},
			{From: "0.23", Value: "true", Allowed: []string{"true"}, Change: "PR #44560",
				apply: func(r *Release) { r.Rules.ReserveInflight = true }},
		},
	},
	{
		Field:  "engine.deferred_free",
		Source: "Scheduler._free_request_blocks, deferred_frees, _drain_deferred_frees",
		Steps: []RuleStep{
			{From: "0.10", Value: "false", Allowed: []string{"false"}, Change: "blocks are freed when the request leaves",
				apply: func(r *Release) { r.Rules.DeferFrees = false }},
			{From: "0.24", Value: "true", Allowed: []string{"true"}, Change: "PR #45357",
				apply: func(r *Release) { r.Rules.DeferFrees = true }},
		},
	},
	{
		Field:  "engine.fenced_victim",
		Source: "Scheduler.schedule, the running loop's allocation retry",
		Steps: []RuleStep{
			{From: "0.10", Value: "cascade", Allowed: []string{"cascade"}, Change: "preempt the next victim until the allocation succeeds",
				apply: func(r *Release) { r.Rules.FencedVictim = Cascade }},
			{From: "0.30", Value: "wait", Allowed: []string{"wait"}, Change: "PR #49675",
				apply: func(r *Release) { r.Rules.FencedVictim = Wait }},
		},
	},
	{
		Field:  "engine.watermark",
		Source: "SchedulerConfig.watermark, allocate_slots",
		Steps: []RuleStep{
			{From: "0.10", Value: "0", Allowed: []string{"0"}, Change: "no watermark in vLLM V1",
				apply: func(r *Release) { r.Rules.WatermarkBlocks = 0 }},
			{From: "0.24", Value: "0", Allowed: []string{"0", "any"}, Change: "PR #44594",
				apply: func(r *Release) { r.Rules.WatermarkBlocks = 0 }},
		},
	},
	{
		Field:  "kv_hold",
		Source: "NixlConnectorScheduler: VLLM_NIXL_ABORT_REQUEST_TIMEOUT, then kv_lease_duration",
		Steps: []RuleStep{
			{From: "0.10", Value: "timeout 120s", Allowed: []string{"timeout"}, Change: "PR #20139",
				apply: func(r *Release) { r.Connector.Lease, r.Connector.HoldTimeoutNs = false, 120e9 }},
			{From: "0.11", Value: "timeout 480s", Allowed: []string{"timeout"}, Change: "PR #25897",
				apply: func(r *Release) { r.Connector.Lease, r.Connector.HoldTimeoutNs = false, 480e9 }},
			{From: "0.22", Value: "lease 30s", Allowed: []string{"lease"}, Change: "PR #41383",
				apply: func(r *Release) { r.Connector.Lease, r.Connector.HoldTimeoutNs = true, 0 }},
		},
	},
	{
		Field:  "notify_rejected",
		Source: "KVConnectorBase_V1.request_rejected_before_admission",
		Steps: []RuleStep{
			{From: "0.10", Value: "false", Allowed: []string{"false"}, Change: "a refused request's KV waits for the hold to end",
				apply: func(r *Release) { r.Connector.NotifyRejected = false }},
			{From: "0.21", Value: "true", Allowed: []string{"true"}, Change: "PR #41269",
				apply: func(r *Release) { r.Connector.NotifyRejected = true }},
		},
	},
	{
		Field:  "kv_load_failure_policy",
		Source: "KVTransferConfig.kv_load_failure_policy, Scheduler._handle_invalid_blocks",
		Steps: []RuleStep{
			{From: "0.10", Value: "recompute", Allowed: []string{"recompute"}, Change: "PR #19330",
				apply: func(r *Release) { r.Connector.LoadFailure = LoadRecompute }},
			{From: "0.11", Value: "recompute", Allowed: []string{"recompute", "fail"}, Change: "PR #26813",
				apply: func(r *Release) { r.Connector.LoadFailure = LoadRecompute }},
			{From: "0.17", Value: "fail", Allowed: []string{"fail", "recompute"}, Change: "PR #34896",
				apply: func(r *Release) { r.Connector.LoadFailure = LoadFail }},
		},
	},
}

// HybridTiersFrom is the first vLLM release whose KV offloading takes a
// hybrid model's KV cache groups (the OffloadingConnector's SupportsHMA:
// PRs #41228, the scheduler's sliding-window groups, and #41445, May
// 2026); HybridTiersChange names them. Before it the connector refused a
// model served by the hybrid KV cache manager ("does not support HMA but
// HMA is enabled"), whose sliding-window layers it could offload only as
// full-attention ones, with the manager turned off.
const (
	HybridTiersFrom   = "0.21"
	HybridTiersChange = "PRs #41228 and #41445, the OffloadingConnector's hybrid KV cache groups"
)

// CheckHybridTiers reports whether lower KV tiers may serve a model with
// sliding-window layers under vLLM version (Latest, or a release from
// VLLMVersions), and otherwise names the release that brought them.
func CheckHybridTiers(version string) error {
	if version == Latest || !versionLess(version, HybridTiersFrom) {
		return nil
	}
	return fmt.Errorf("lower KV tiers for a model with sliding-window layers came with vLLM %s (%s); vLLM %s "+
		"refuses them unless the hybrid KV cache manager is off, which handoff does not model", HybridTiersFrom,
		HybridTiersChange, version)
}
