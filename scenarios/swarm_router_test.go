package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"handoff/models/router"
)

// The swarm's router draws: a policy from the registry, a refresh
// interval, and each policy's section — under any policy, as a sweep
// that switches policies leaves them — with its knobs.

// router draws the router block: round_robin for a split case.
func (d *swarmDoc) router() {
	rng := d.rng
	name := pickOf(rng, policyNames())
	switch {
	case d.decodeFirst:
		name = pickOf(rng, arrivalDecoders()) // dynamo picks the decoder after the prefill
	case d.split:
		name = "round_robin" // the one policy that reads no state the instances change
	}
	chosen, _ := policy(name)
	d.tag(name)
	d.line("router:")
	d.line("  policy: %s", name)
	if rng.IntN(3) == 0 {
		d.tag("stale")
		d.line("  refresh_interval: %dms", rng.IntN(200))
	}
	for _, p := range routerPolicies {
		if p.section == nil {
			continue
		}
		if own := p.name == name || slices.Contains(chosen.reads, p.section.key); !own && rng.IntN(3) > 0 {
			continue
		}
		switch p.section.key {
		case "dynamo":
			d.dynamo(name)
		case "llmd":
			d.llmd()
		case "topology_aware":
			d.line("  topology_aware: {blocks_per_ms: %.2f}", 4*rng.Float64())
		case "sglang":
			d.sglang()
		default:
			panic("swarm: no draw of router section " + p.section.key)
		}
	}
}

// sglang draws SGLang's router: a policy per leg (the legs' left to
// the main one for some), its thresholds low enough to switch, and
// eviction frequent and tight enough to run.
func (d *swarmDoc) sglang() {
	rng := d.rng
	parts := []string{"policy: " + pickOf(rng, router.SGLangPolicies()),
		fmt.Sprintf("cache_threshold: %.2f", rng.Float64()), fmt.Sprintf("balance_abs_threshold: %d", rng.IntN(8)),
		fmt.Sprintf("balance_rel_threshold: %.2f", 1+rng.Float64()), fmt.Sprintf("eviction_interval: %dms", rng.IntN(2000)),
		fmt.Sprintf("max_tree_size: %d", rng.IntN(200000)), "cache_miss: " + pickOf(rng, router.SGLangMisses())}
	if rng.IntN(2) == 0 {
		parts = append(parts, "prefill_policy: "+pickOf(rng, router.SGLangPolicies()),
			"decode_policy: "+pickOf(rng, router.SGLangPolicies()))
	}
	d.line("  sglang: {%s}", strings.Join(parts, ", "))
}

// dynamo draws Dynamo's knobs: credits, decay, scale, request weight, the
// lower tiers' hit weights, temperature, a queue threshold, its own index
// instead of KV events (with a TTL), KV reuse, the busy thresholds, session
// affinity, output-block tracking, and conditional
// disaggregation (P/D only, and not under topology_aware, whose pair
// search replaces it) by either policy; the deprecated weight for some.
func (d *swarmDoc) dynamo(policy string) {
	rng := d.rng
	parts := []string{
		fmt.Sprintf("overlap_score_credit: %d", rng.IntN(3)), fmt.Sprintf("overlap_score_credit_decay: %d", rng.IntN(3)),
		fmt.Sprintf("prefill_load_scale: %d", 1+rng.IntN(3)), fmt.Sprintf("decode_active_request_weight: %d", rng.IntN(3)),
		fmt.Sprintf("host_cache_hit_weight: %.2f", rng.Float64()), fmt.Sprintf("disk_cache_hit_weight: %.2f", rng.Float64()),
		"temperature: " + pick(rng, "0", "0", "0.5"), "router_queue_threshold: " + pick(rng, "0", "0", "1.5", "4"),
		fmt.Sprintf("assume_kv_reuse: %v", rng.IntN(2) == 0),
		"shared_cache_multiplier: " + pick(rng, "0", "0.5", "1"),
		"router_queue_policy: " + pick(rng, router.QueuePolicies()...),
	}
	if rng.IntN(3) == 0 {
		parts = append(parts, "use_kv_events: false", fmt.Sprintf("ttl: %dms", 1+rng.IntN(1000)))
	} else {
		parts = append(parts, "use_kv_events: true")
	}
	if rng.IntN(5) == 0 {
		parts = append(parts, fmt.Sprintf("kv_overlap_score_weight: %d", rng.IntN(2)))
	}
	if rng.IntN(3) == 0 {
		parts = append(parts, fmt.Sprintf("active_decode_blocks_threshold: %.2f", 0.3+0.7*rng.Float64()),
			fmt.Sprintf("active_prefill_tokens_threshold: %d", rng.IntN(8192)),
			fmt.Sprintf("active_prefill_tokens_threshold_frac: %.2f", 4*rng.Float64()))
	}
	if rng.IntN(3) == 0 {
		parts = append(parts, fmt.Sprintf("session_affinity_ttl: %ds", 1+rng.IntN(60)))
	}
	parts = append(parts, fmt.Sprintf("router_track_output_blocks: %v", rng.IntN(3) == 0))
	conditional := d.pd && policy != "topology_aware" && rng.IntN(2) == 0
	parts = append(parts, fmt.Sprintf("conditional_disagg: %v", conditional),
		"conditional_disagg_policy: "+pick(rng, router.ConditionalPolicies()...),
		"conditional_peek_cost: "+pick(rng, router.PeekDecode, router.PeekFull))
	if conditional {
		parts = append(parts, fmt.Sprintf("conditional_prefill_bypass_below_tokens: %d", 1+rng.IntN(400)),
			fmt.Sprintf("eff_isl_threshold: %d", rng.IntN(400)), fmt.Sprintf("eff_isl_ratio_threshold: %.2f", rng.Float64()),
			fmt.Sprintf("prefill_busy_threshold: %.2f", 2*rng.Float64()), fmt.Sprintf("decode_busy_threshold: %.2f", rng.Float64()))
	}
	d.line("  dynamo: {%s}", strings.Join(parts, ", "))
}

// llmd draws llm-d's scorers (a subset of the registered ones, weights
// left to their default for some), picker, disaggregation threshold,
// index capacity, no-hit LRU size, token-load threshold, the context-length filter, the prefix-affinity filter, medium weights and flow control (its thresholds low, so
// that it holds, or left to llm-d's) — or, for a quarter, reads them from
// a shipped EndpointPickerConfig (router.from).
func (d *swarmDoc) llmd() {
	rng := d.rng
	if rng.IntN(4) == 0 {
		d.tag("router_from")
		d.line("  from: %s", d.path("epp/"+pick(rng, "precise-prefix.yaml", "pd.yaml")))
		return
	}
	var scorers []string
	for _, name := range some(rng, router.ScorerNames()) {
		if rng.IntN(4) == 0 {
			scorers = append(scorers, "{name: "+name+"}")
		} else {
			scorers = append(scorers, fmt.Sprintf("{name: %s, weight: %d}", name, rng.IntN(4)))
		}
	}
	parts := []string{"scorers: [" + strings.Join(scorers, ", ") + "]", "picker: " + pickOf(rng, router.PickerNames()),
		"non_cached_tokens: " + pick(rng, "0", "0", "64", "1024"), fmt.Sprintf("lru_capacity_per_server: %d", rng.IntN(2)*rng.IntN(64))}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("no_hit_lru_size: %d", 1+rng.IntN(8)))
	}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("token_load_threshold: %d", 1+rng.IntN(100000)))
	}
	parts = append(parts, fmt.Sprintf("context_length_filter: %v", rng.IntN(4) == 0))
	if rng.IntN(3) == 0 {
		f := ""
		if rng.IntN(2) == 0 {
			f = fmt.Sprintf("affinity_threshold: %.2f, exploration_probability: %.2f", rng.Float64(), rng.Float64()/4)
		}
		parts = append(parts, "prefix_affinity_filter: {"+f+"}")
	}
	if rng.IntN(2) == 0 {
		var weights []string
		for _, medium := range []string{"gpu", "cpu", "disk", "store"} {
			if rng.IntN(2) == 0 {
				weights = append(weights, fmt.Sprintf("%s: %.2f", medium, rng.Float64()))
			}
		}
		parts = append(parts, "medium_weights: {"+strings.Join(weights, ", ")+"}")
	}
	if rng.IntN(2) == 0 {
		fc := "enabled: " + pick(rng, "true", "true", "false")
		if rng.IntN(2) == 0 {
			fc += fmt.Sprintf(", queue_depth_threshold: %d, kv_cache_util_threshold: %.2f", 1+rng.IntN(8), 0.2+0.8*rng.Float64())
		}
		parts = append(parts, "flow_control: {"+fc+"}")
	}
	d.line("  llmd: {%s}", strings.Join(parts, ", "))
}
