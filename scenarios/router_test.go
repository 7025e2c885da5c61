package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"handoff/models/router"
	"handoff/results"
	"handoff/sim"
)

func TestRouterDefaults(t *testing.T) {
	l, err := Parse([]byte(base+"router: {policy: topology_aware}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := router.DynamoConfig{OverlapScoreCredit: 1, PrefillLoadScale: 1, HostCacheHitWeight: 0.75, DiskCacheHitWeight: 0.25,
		UseKVEvents: true, TTL: 120e9, AssumeKVReuse: true, QueuePolicy: "fcfs", ConditionalPolicy: "isl_bounding", ConditionalPeekCost: "decode",
		BypassBelowTokens: 5000, EffISLThreshold: 2048, EffISLRatioThreshold: 0.7}
	if d := l.Router.Dynamo; d == nil || !reflect.DeepEqual(*d, want) {
		t.Errorf("dynamo = %+v, want %+v", d, want)
	}
	if ta := l.Router.TopologyAware; ta == nil || ta.BlocksPerMs != 1 || l.Router.LLMD != nil {
		t.Errorf("topology_aware = %+v, llmd = %+v", ta, l.Router.LLMD)
	}
	l, err = Parse([]byte(base+"router: {policy: llmd, llmd: {scorers: [{name: queue}], non_cached_tokens: 0}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantLLMD := router.LLMDConfig{Scorers: []router.WeightedScorer{{Name: "queue", Weight: 1}}, Picker: "max-score",
		NoHitLRUSize: 1024, TokenLoadThreshold: 4194304} // LRUs sized from the pools
	if m := l.Router.LLMD; m == nil || !reflect.DeepEqual(*m, wantLLMD) {
		t.Errorf("llmd = %+v, want %+v", m, wantLLMD)
	}
	if l.Router.RefreshInterval != 50e6 {
		t.Errorf("llmd's view refresh %v, want the EPP's 50ms", l.Router.RefreshInterval)
	}
	l, err = Parse([]byte(base+"router: {policy: llmd, llmd: {flow_control: {enabled: true, queue_depth_threshold: 8}}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f := l.Router.LLMD.FlowControl; f == nil || *f != (router.FlowControl{Enabled: true, QueueDepthThreshold: 8, KVCacheUtilThreshold: 0.8}) {
		t.Errorf("flow control %+v, want the KV threshold defaulted to llm-d's 0.8", f)
	}
	l, err = Parse([]byte(base+"router: {policy: dynamo, dynamo: {overlap_score_credit: 0}}\n"), "t.yaml")
	if err != nil || l.Router.Dynamo.OverlapScoreCredit != 0 {
		t.Errorf("an explicit 0 credit was not kept: %v", err)
	}
}

func TestRouterRoundTrip(t *testing.T) {
	for _, sets := range [][]string{
		{"router.policy=dynamo", "router.refresh_interval=1s", "router.dynamo.overlap_score_credit=0.5",
			"router.dynamo.conditional_disagg=true", "router.dynamo.use_kv_events=false", "router.dynamo.kv_overlap_score_weight=0"},
		{"router.policy=llmd", "router.llmd.picker=weighted-random", "router.llmd.non_cached_tokens=256",
			"router.llmd.flow_control.enabled=true", "router.llmd.flow_control.kv_cache_util_threshold=0.5"},
		{"router.policy=topology_aware", "router.topology_aware.blocks_per_ms=0.5", "router.dynamo.temperature=0.3"},
	} {
		t.Run(sets[0], func(t *testing.T) { roundTrip(t, "quickstart.yaml", mustSets(t, sets...)) })
	}
}

func TestRouterSetReachesListItemsByName(t *testing.T) {
	doc := base + "router:\n  policy: llmd\n  llmd: {scorers: [{name: queue, weight: 2}, {name: prefix-cache, weight: 3}]}\n"
	l, err := Parse([]byte(doc), "t.yaml", mustSets(t, "router.llmd.scorers.prefix-cache.weight=7")...)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Router.LLMD.Scorers[1]; got != (router.WeightedScorer{Name: "prefix-cache", Weight: 7}) {
		t.Fatalf("scorer = %+v", got)
	}
}

func TestRouterErrors(t *testing.T) {
	tests := []struct {
		name, router, want string
	}{
		{"negative weight", "{policy: dynamo, dynamo: {overlap_score_credit: -1}}",
			"t.yaml:19: field router.dynamo.overlap_score_credit: must be in [0, 1e+09], got -1"},
		{"negative temperature", "{policy: dynamo, dynamo: {temperature: -0.5}}",
			"field router.dynamo.temperature: must be in [0, 1e+09], got -0.5"},
		{"NaN scale", "{policy: dynamo, dynamo: {prefill_load_scale: .nan}}", "field router.dynamo.prefill_load_scale: must be in"},
		{"deprecated negative", "{policy: dynamo, dynamo: {kv_overlap_score_weight: -2}}",
			"field router.dynamo.kv_overlap_score_weight: must be in"},
		{"ratio above 1", "{policy: dynamo, dynamo: {eff_isl_ratio_threshold: 1.5}}",
			"field router.dynamo.eff_isl_ratio_threshold: must be in [0, 1], got 1.5"},
		{"negative isl threshold", "{policy: dynamo, dynamo: {eff_isl_threshold: -1}}", "field router.dynamo.eff_isl_threshold"},
		{"ttl without events", "{policy: dynamo, dynamo: {use_kv_events: false, ttl: 0s}}",
			"field router.dynamo.ttl: must be positive when use_kv_events is false"},
		{"negative refresh", "{policy: dynamo, refresh_interval: -1s}", "router.refresh_interval"},
		{"unknown scorer", "{policy: llmd, llmd: {scorers: [{name: queue, weight: 1}, {name: vibes, weight: 1}]}}",
			`field router.llmd.scorers[1].name: unknown scorer "vibes" (known: prefix-cache, `},
		{"duplicate scorer", "{policy: llmd, llmd: {scorers: [{name: queue}, {name: queue}]}}", `scorer "queue" is listed twice`},
		{"negative scorer weight", "{policy: llmd, llmd: {scorers: [{name: queue, weight: -2}]}}",
			"field router.llmd.scorers[0].weight: must be in [0, 1e+09], got -2"},
		{"no scorers", "{policy: llmd, llmd: {scorers: []}}", "field router.llmd.scorers: at least one scorer"},
		{"unknown picker", "{policy: llmd, llmd: {picker: best}}", `field router.llmd.picker: unknown picker "best" (known: max-score, weighted-random)`},
		{"negative non-cached", "{policy: llmd, llmd: {non_cached_tokens: -5}}", "field router.llmd.non_cached_tokens"},
		{"negative lru", "{policy: llmd, llmd: {lru_capacity_per_server: -1}}", "field router.llmd.lru_capacity_per_server"},
		{"queue depth 0", "{policy: llmd, llmd: {flow_control: {enabled: true, queue_depth_threshold: 0}}}",
			"t.yaml:19: field router.llmd.flow_control.queue_depth_threshold: must be in [1, 1048576] requests, got 0"},
		{"KV threshold above 1", "{policy: llmd, llmd: {flow_control: {kv_cache_util_threshold: 80}}}",
			"field router.llmd.flow_control.kv_cache_util_threshold: must be in (0, 1], got 80"},
		{"host weight above 1", "{policy: dynamo, dynamo: {host_cache_hit_weight: 1.5}}", "field router.dynamo.host_cache_hit_weight: must be in [0, 1]"},
		{"disk weight above 1", "{policy: dynamo, dynamo: {disk_cache_hit_weight: 2}}", "field router.dynamo.disk_cache_hit_weight: must be in [0, 1]"},
		{"unknown conditional policy", "{policy: dynamo, dynamo: {conditional_disagg_policy: regression}}",
			"field router.dynamo.conditional_disagg_policy: unknown policy"},
		{"negative shared multiplier", "{policy: dynamo, dynamo: {shared_cache_multiplier: -0.5}}",
			"t.yaml:19: field router.dynamo.shared_cache_multiplier: must be in [0, 1e+09], got -0.5"},
		{"negative prefill busy", "{policy: dynamo, dynamo: {prefill_busy_threshold: -1}}",
			"field router.dynamo.prefill_busy_threshold: must be in [0, 1e+09], got -1"},
		{"negative decode busy", "{policy: dynamo, dynamo: {decode_busy_threshold: -0.1}}",
			"field router.dynamo.decode_busy_threshold: must be in [0, 1e+09], got -0.1"},
		{"unknown peek cost", "{policy: dynamo, dynamo: {conditional_peek_cost: prefill}}",
			"field router.dynamo.conditional_peek_cost: unknown cost \"prefill\" (known: decode, full)"},
		{"unknown queue policy", "{policy: dynamo, dynamo: {router_queue_policy: sjf}}",
			"field router.dynamo.router_queue_policy: unknown policy \"sjf\" (known: fcfs, lcfs, wspt)"},
		{"negative blocks per ms", "{policy: topology_aware, topology_aware: {blocks_per_ms: -1}}",
			"field router.topology_aware.blocks_per_ms"},
		{"topology with conditional", "{policy: topology_aware, dynamo: {conditional_disagg: true}}",
			"field router.dynamo.conditional_disagg: does not apply to policy topology_aware"},
		{"sglang threshold above 1", "{policy: sglang, sglang: {cache_threshold: 1.5}}",
			"t.yaml:19: field router.sglang.cache_threshold: must be in [0, 1], got 1.5"},
		{"sglang unknown decode policy", "{policy: sglang, sglang: {decode_policy: least_loaded}}",
			"field router.sglang.decode_policy: unknown policy \"least_loaded\" (known: cache_aware, round_robin, random, power_of_two)"},
		{"sglang negative abs threshold", "{policy: sglang, sglang: {balance_abs_threshold: -1}}",
			"field router.sglang.balance_abs_threshold: must not be negative"},
		{"sglang negative rel threshold", "{policy: sglang, sglang: {balance_rel_threshold: -1}}",
			"field router.sglang.balance_rel_threshold: must be in [0, 1e+09], got -1"},
		{"sglang negative tree size", "{policy: sglang, sglang: {max_tree_size: -5}}",
			"field router.sglang.max_tree_size: must be in [0, 1099511627776] characters, got -5"},
		{"sglang unknown miss", "{policy: sglang, sglang: {cache_miss: random}}",
			"field router.sglang.cache_miss: unknown choice \"random\" (known: least_load, smallest_tree)"},
		{"unknown key", "{policy: dynamo, dynamo: {credit: 2}}", "router.dynamo.credit"},
		{"bad section in unused policy", "{policy: round_robin, llmd: {picker: best}}", "field router.llmd.picker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(base+"router: "+tc.router+"\n"), "t.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestConditionalDisaggNeedsDisaggregatedCluster(t *testing.T) {
	doc := edit(t, "    role: prefill\n", "    role: colocated\n")
	doc = strings.Replace(doc, "    role: decode\n", "    role: colocated\n", 1)
	_, err := Parse([]byte(doc+"router: {policy: dynamo, dynamo: {conditional_disagg: true}}\n"), "t.yaml")
	if err == nil || !strings.Contains(err.Error(), "field router.dynamo.conditional_disagg: needs prefill and decode pools") {
		t.Fatalf("error %v", err)
	}
}

func TestDeprecatedOverlapWeightWarnsOnce(t *testing.T) {
	_, b, err := parseBuild(t, base+"router: {policy: dynamo, dynamo: {kv_overlap_score_weight: 0, prefill_load_scale: 3}}\n", "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "t.yaml: router.dynamo.kv_overlap_score_weight is deprecated") ||
		!strings.Contains(b.Warnings[0], "overlap_score_credit to 0") {
		t.Fatalf("warnings %q", b.Warnings)
	}
	_, b, err = parseBuild(t, base+"router: {policy: dynamo}\n", "t.yaml")
	if err != nil || len(b.Warnings) != 0 {
		t.Fatalf("warnings %q, err %v", b.Warnings, err)
	}
}

// TestRouterPoliciesRun builds and runs base under every policy: every
// request completes and the configuration carries the router's needs.
func TestRouterPoliciesRun(t *testing.T) {
	for _, r := range []string{
		"{policy: least_loaded}",
		"{policy: dynamo, refresh_interval: 1s}",
		"{policy: dynamo, dynamo: {conditional_disagg: true, use_kv_events: false, temperature: 0.5, router_queue_threshold: 0.5}}",
		"{policy: llmd, llmd: {non_cached_tokens: 64}}",
		"{policy: llmd}",
		"{policy: topology_aware}",
	} {
		t.Run(r, func(t *testing.T) {
			l, b, err := parseBuild(t, base+"router: "+r+"\n", "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			needs := l.Router.Policy != "least_loaded"
			if router.UsesHashes(b.Config.Router) != needs || b.Config.RefreshIntervalNs != int64(l.Router.RefreshInterval) {
				t.Fatalf("uses hashes %v, refresh %d", router.UsesHashes(b.Config.Router), b.Config.RefreshIntervalNs)
			}
			res, err := sim.Run(b.Config)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range res.Records {
				if rec.Status != results.Completed {
					t.Fatalf("request %d ended %v", rec.ID, rec.Status)
				}
			}
		})
	}
}
