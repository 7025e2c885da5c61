package report

import (
	"strings"
)

// definitions holds what each figure of a report means, one hover away
// (a title attribute). The wording follows docs/OUTPUTS.md and
// results.Summarize; keys are summary.json's and the CSVs'
// column names. A results.csv column "ttft_p90_s" is defined from its
// metric ("ttft") and statistic ("p90") by Define.
var definitions = map[string]string{
	// Requests.
	"requests_total":     "every request the workload sent: completed + rejected + dropped + failed + abandoned",
	"requests_completed": "requests that produced their last token",
	"requests_rejected":  "requests refused by the admission policy under test (or refused 8 times by decoders)",
	"requests_dropped":   "requests no instance could ever hold (prompt + output beyond the KV pool or max_model_len)",
	"requests_failed":    "requests aborted on an instance that stayed locked up (any kind) for metrics.lockup_abort",
	"requests_abandoned": "requests whose client timed out (workload.client)",

	// Latency metrics (DistServe's definitions), over completed requests.
	"ttft": "time to first token: first token seen by the client − arrival (in P/D, after the KV transfer and the decoder's first step)",
	"tpot": "time per output token: (E2E − TTFT) / (output tokens − 1), for requests with 2 or more output tokens",
	"itl":  "inter-token latency: the gap before each token after the first (log-linear histogram, accurate to 0.4%)",
	"e2e":  "end-to-end latency: last token seen by the client − arrival",

	// Statistics.
	"mean": "mean over completed requests",
	"p50":  "median: 50th percentile, linear interpolation between closest ranks",
	"p90":  "90th percentile, linear interpolation between closest ranks",
	"p99":  "99th percentile, linear interpolation between closest ranks",
	"max":  "largest value",

	// Throughput and goodput.
	"throughput_rps":                      "completed requests per second of the run span (first arrival to last finish)",
	"offered_rps":                         "the load offered: arrivals per second of the arrival span (first to last arrival)",
	"output_tokens_per_s":                 "output tokens of completed requests per second of the run span",
	"output_tokens_per_s_per_gpu":         "output tokens per second per device of the fleet, of whatever kind: GPU, Trainium chip, wafer (InferenceMAX's throughput axis, per GPU)",
	"interactivity_tokens_per_s_per_user": "1 / mean TPOT: tokens per second one user sees (InferenceMAX's interactivity axis)",
	"attainment":                          "SLO attainment: share of all requests (completed, rejected, dropped, failed, abandoned) that completed within both the TTFT and the TPOT limit",
	"slo_met":                             "whether the attainment reached the scenario's target",
	"slo_target":                          "the attainment the scenario asks for (slo.attainment)",
	"slo_ttft":                            "the TTFT limit of the SLO (∞: none)",
	"slo_tpot":                            "the TPOT limit of the SLO (∞: none)",
	"good":                                "requests that completed within both SLO limits",
	"request_goodput_rps":                 "request goodput: requests that completed within both SLO limits per second of the run span (first arrival to last finish), as vLLM's request_goodput; never above the throughput",
	"request_goodput_rps_per_gpu":         "request goodput divided by the fleet's devices (GPUs, Trainium chips, wafers)",
	"max_goodput":                         "max goodput (DistServe's goodput): the highest offered rate whose attainment (TTFT and TPOT met together) reaches the target, found by bisection over the rate",
	"max_goodput_each":                    "DistServe's looser variant: the highest offered rate at which TTFT and TPOT are each met by the target share of requests",
	"prefix_cache_hit_rate":               "Σ cached prompt tokens / Σ prompt tokens over completed requests (lower KV tiers included)",
	"host_hit_rate":                       "prompt tokens of completed requests read from the host tier over their prompt tokens",
	"disk_hit_rate":                       "prompt tokens of completed requests read from the disk tier over their prompt tokens",
	"store_hit_rate":                      "prompt tokens of completed requests read from the shared store over their prompt tokens",
	"onboard_mean_s":                      "mean time per completed request copying prefix hits up from the lower KV tiers, s",
	"gpus":                                "devices in the fleet, of every kind: GPUs, Trainium chips, wafers, LPUs (the key keeps its name)",
	"sim_time_s":                          "simulated time at the end of the run, s",
	"wall_time_s":                         "wall-clock time of the run, s (the only figure that differs between identical runs)",
	"events":                              "events the simulator processed",
	"seed":                                "the seed: one seed reproduces a run byte for byte",

	// Preemption (over the decode instances, or all of a colocated cluster).
	"preemptions":           "Σ preemptions over the requests",
	"count":                 "preemptions on the decode instances (all instances when colocated)",
	"reprefill_tokens":      "tokens recomputed after recompute preemptions",
	"decoder_prefill_share": "share of the decoders' busy time spent on prefill work, re-prefill included",
	"cascades":              "preemption chains of 2 or more on one instance, each preemption made while an earlier victim still waits for or runs its recovery",
	"longest_cascade":       "the deepest preemption chain",
	"cascade_s":             "time inside preemption cascades, s",
	"lockups":               "lock-up spells of every kind on every instance (deadlock, preemption_loop, pinned), each longer than metrics.lockup_threshold",
	"lockup_s":              "time inside lock-ups, s",

	// Lock-ups by kind, and the chains between instances.
	"lockup_kinds":         "spells longer than metrics.lockup_threshold in which an instance made no progress and its own scheduling could not change that; an instance locked up, of any kind, for metrics.lockup_abort aborts its requests (they fail, the reason naming the kind)",
	"deadlock":             "deadlock: queued work, nothing running, no step it can start, nothing on its way that would let it, and no KV held for decoders: spells (s)",
	"preemption_loop":      "preemption loop: busy, preempting or with victims still to recover, and no normal decode token: spells (s)",
	"pinned":               "pinned: a prefiller with queued work and nothing running that cannot start a step because its pool holds KV its decoders have not pulled: spells (s)",
	"lockup_chain":         "who waited for whom: the locked instance and its kind, then the instance it waited for (a pinned prefiller: the decoder holding most of its unpulled KV), on while that one was locked up too; the last one's own admission stop in brackets, or (cycle)",
	"chain_spells":         "the locked instance's spells that formed this chain",
	"chain_s":              "time inside those spells, s",
	"chain_first_s":        "when the first of them began, s of simulated time",
	"chain_longest_s":      "the longest of them, s",
	"chain_longest_from_s": "when the longest began, s of simulated time",
	"chain_example":        "the longest spell's chain, with when each locked instance on it began its lock-up",
	"swap_outs":            "preemptions whose blocks went to the host tier",
	"rejections":           "sequences a decoder refused (reject policy) and handed back to the router",
	"wasted_tokens":        "tokens generated and then thrown away by rejections (phase 1)",

	// Instances.
	"instance":      "the instance's name",
	"pool":          "the pool it belongs to",
	"role":          "colocated (prefill and decode), prefill (runs prompts and ships their KV) or decode (receives KV and generates)",
	"owner":         "who answers for its time in the attribution (the pool's owner, by default its name)",
	"busy_s":        "simulated time spent inside steps, s",
	"utilization":   "busy time / simulated time of the run",
	"prefill_share": "prefill busy time (re-prefill included) / busy time",
	"recompiles":    "wafer-scale engines: recompile pauses",

	// Attribution.
	"attribution":       "mean seconds per completed request of each time component; a request's components add up exactly to its TTFT and to E2E − TTFT",
	"attribution_owner": "each owner's share of the mean completed request: prefill components and the front end belong to the prefill pool's owner, decode components and the emission to the decode pool's, router and transfer time to nobody unless a pool claims it, rejection round trips to nobody",
	"owner_ttft_s":      "the owner's part of the mean TTFT, ms",
	"owner_decode_s":    "the owner's part of the mean time from first to last token, s",
	"owner_total_s":     "the owner's part of the mean E2E, s",
	"share":             "the owner's part of the mean E2E / the mean E2E",

	// Time components (results.TimeNames).
	"frontend":           "the serving front end: client → engine (HTTP, tokenization) and the first token's way back",
	"router_queue":       "from reaching the router to being enqueued on its prefill instance",
	"prefill_queue":      "waiting on the prefill instance (and recomputing there after a preemption)",
	"prefill_compute":    "prefill steps",
	"onboard":            "copying prefix hits up from lower KV tiers (host, disk, store) before the prefill goes on",
	"transfer":           "KV transfer and staging into the decoder",
	"decode_queue_first": "on the decoder before the first token: waiting for blocks, then the first step",
	"decode_compute":     "decode steps",
	"decode_queue":       "waiting on the decoder while not preempted",
	"reprefill":          "from a recompute preemption until its context was recomputed",
	"swap":               "swapped out to the host tier",
	"rejection":          "from a decoder's rejection until the new attempt's first token",
	"emit":               "the last token's way to the client less the first's (negative when it is quicker)",

	// Table heads and names.
	"metric":               "the latency metric over completed requests: TTFT, TPOT and ITL in ms, E2E in s",
	"status":               "how the requests ended",
	"reason_kind":          "the reason with each request's own figures replaced by N",
	"reason_count":         "requests with a reason of this kind",
	"first_request":        "the first such request (lowest id)",
	"example_reason":       "the first such request's reason in full (requests.csv has every request's own)",
	"component":            "a time component of a request (results.TimeNames)",
	"part_of":              "TTFT's components add up to the TTFT, decode's to the time from first to last token",
	"wait_cause":           "why a queued request was not admitted at a scheduling pass (summary.json waits)",
	"wait_prefill_s":       "seconds requests waited for that cause on the instances that prefill (prefill and colocated pools), summed",
	"wait_decode_s":        "seconds requests waited for that cause on the decode instances, summed",
	"wait_prefill_share":   "the cause's part of the prefill side's wait",
	"wait_decode_share":    "the cause's part of the decode side's wait",
	"wait_busy":            "a step was in flight: the next scheduling pass had not come",
	"wait_max_num_seqs":    "the running set was full (max_num_seqs)",
	"wait_kv_blocks":       "the queue's head could not get KV blocks (or swapped-out requests ahead of it could not)",
	"wait_token_budget":    "the step's token budget (max_num_batched_tokens) was spent",
	"component_ms":         "mean ms per completed request spent in the component",
	"component_share":      "the component's part of the mean TTFT, or of the mean time from first to last token",
	"scenario_name":        "the scenario's name",
	"model":                "the served model (handoff catalog models)",
	"shard":                "the points this directory holds: all, or i/n of a sharded sweep",
	"tier":                 "a lower KV tier: host DRAM, local disk or the shared store",
	"tier_hit_rate":        "prompt tokens of completed requests read from the tier over their prompt tokens",
	"instance_preemptions": "preemptions on the instance",

	// A changing fleet (summary.json fleet: autoscaling, crashes).
	"fleet_changes":           "a fleet that changes over the run (autoscale: pools, crashes): what it was billed, how its pools' sizes moved, and what its faults did to requests",
	"fleet_plot":              "each pool's ready instances against simulated time (solid), and the instances asked for — ready plus those still provisioning or loading weights — dashed",
	"gpu_hours":               "device-hours billed: each instance from its request until it stops (requested, ready or draining), times its devices (GPUs, chips or wafers)",
	"cost_usd":                "the device-hours priced at each pool's accelerator cost_per_hour, $",
	"min_ready":               "the fewest ready (routable) instances the pool had at once",
	"max_ready":               "the most ready (routable) instances the pool had at once",
	"changes":                 "times the pool's counts (ready, requested, draining) changed",
	"scale_ups":               "instances requested and made ready during the run",
	"scale_up_s":              "time from an instance's request to its being ready (provisioning, then loading the weights), s",
	"crashes":                 "instances that crashed (faults:)",
	"failed_over":             "requests moved to another instance at least once because theirs crashed",
	"failover_stall_s":        "per failed-over request: from the crash to its new attempt's first token, summed over its fail-overs, s",
	"lost":                    "failed-over requests that did not complete",
	"slo_attainment_per_hour": "SLO attainment of the requests arriving in each hour of simulated time",

	// Sweeps, goodput searches, plans.
	"id":                       "the point's id: its index and a hash of its overrides (points/<id>/ holds its files)",
	"varied":                   "a scenario field the sweep varies (--vary or the sweep: block)",
	"rate_rps":                 "the offered arrival rate, req/s",
	"scale":                    "the rate as a multiple of the scenario's own",
	"ttft_share":               "share of requests that met the TTFT limit",
	"tpot_share":               "share of requests that met the TPOT limit",
	"meets":                    "attainment (TTFT and TPOT met together) reached the target",
	"meets_each":               "TTFT and TPOT were each met by the target share (DistServe's variant)",
	"cost_per_hour":            "the fleet's price, $ per hour",
	"mark":                     "chosen: the cheapest fleet that serves the rate within the SLO; front: on the Pareto front of cost against request goodput",
	"count_pool":               "instances of the pool",
	"hardware_pool":            "the pool's accelerator",
	"tp_pool":                  "the pool's tensor-parallel degree",
	"scenario":                 "the effective scenario, every default filled (scenario.yaml)",
	"summary":                  "the run's headline figures (summary.json)",
	"kv_tiers":                 "the lower KV tiers: hit rate, bytes read and written, capacity and blocks cached at the end",
	"read_bytes":               "what the tier's read links carried",
	"written_bytes":            "bytes written into the tier",
	"capacity":                 "the tier's capacity in blocks, summed over the instances that have it (a shared store once)",
	"cached_blocks":            "blocks cached in the tier at the end of the run",
	"points":                   "the sweep's points, one row of results.csv each; click a column's head to sort",
	"timeline":                 "one instance's KV use and running batch every sample of simulated time, with its preemptions marked",
	"ttft_cdf":                 "the distribution of TTFT over completed requests, with the SLO's TTFT limit",
	"tpot_cdf":                 "the distribution of TPOT over completed requests, with the SLO's TPOT limit",
	"attainment_plot":          "SLO attainment against the request rate, one curve per combination of the other varied fields, with the target",
	"request_goodput_plot":     "request goodput against the request rate, one curve per combination of the other varied fields",
	"throughput_interactivity": "output tokens/s per device against tokens/s per user, one curve per configuration, with the Pareto front over all points",
	"goodput":                  "attainment against the offered rate as the goodput search measured it: TTFT and TPOT together (the max goodput's criterion) and each on its own",
	"pareto":                   "the fleets run: price against request goodput at the target rate, with the Pareto front and the chosen fleet",
}

// Define returns the definition of a figure or column name; "" when it
// has none. results.csv's latency columns ("ttft_p90_s") combine the
// metric's and the statistic's definitions; "preemption_X" is X; a
// plan's per-pool columns ("decode_count") are their kind's; a column
// naming a scenario path (with a dot, or seed/model/name) is a varied
// field.
func Define(name string) string {
	if d, ok := definitions[name]; ok {
		return d
	}
	if d := latencyDef(name); d != "" {
		return d
	}
	if rest, ok := strings.CutPrefix(name, "preemption_"); ok {
		return definitions[rest]
	}
	for _, kind := range []string{"count", "hardware", "tp"} {
		if strings.HasSuffix(name, "_"+kind) {
			return definitions[kind+"_pool"]
		}
	}
	if strings.Contains(name, ".") || name == "name" {
		return definitions["varied"]
	}
	return ""
}

// latencyDef defines "<metric>_<stat>_s" (ttft, tpot, itl, e2e; mean,
// p50, p90, p99, max).
func latencyDef(name string) string {
	metric, rest, ok := strings.Cut(name, "_")
	stat, unit, ok2 := strings.Cut(rest, "_")
	m, s := definitions[metric], definitions[stat]
	if !ok || !ok2 || unit != "s" || m == "" || s == "" || strings.Contains(metric, "_") {
		return ""
	}
	return strings.ToUpper(metric) + ", " + stat + ", s: " + s + "; " + m
}
