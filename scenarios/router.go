package scenarios

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"handoff/models/router"
	"handoff/models/strictyaml"
	"handoff/models/units"
)

// The router sections of a scenario. Each policy reads its own section;
// topology_aware reads dynamo's too. Sections for other policies may stay
// in the file (so a sweep can switch policy with --set router.policy=...)
// and are validated all the same.

// DynamoRouter holds the knobs of Dynamo's KV router (router.DynamoConfig
// documents the cost).
type DynamoRouter struct {
	OverlapScoreCredit        float64 `yaml:"overlap_score_credit"`
	OverlapScoreCreditDecay   float64 `yaml:"overlap_score_credit_decay"`
	PrefillLoadScale          float64 `yaml:"prefill_load_scale"`
	DecodeActiveRequestWeight float64 `yaml:"decode_active_request_weight"`
	HostCacheHitWeight        float64 `yaml:"host_cache_hit_weight"` // credit per host-tier block past the device overlap
	DiskCacheHitWeight        float64 `yaml:"disk_cache_hit_weight"` // per disk or store block
	// Deprecated: replaces prefill_load_scale (and at 0 zeroes the credit).
	KVOverlapScoreWeight *float64       `yaml:"kv_overlap_score_weight,omitempty"`
	Temperature          float64        `yaml:"temperature"`
	RouterQueueThreshold float64        `yaml:"router_queue_threshold,omitempty"` // 0 = never hold
	UseKVEvents          *bool          `yaml:"use_kv_events"`
	TTL                  units.Duration `yaml:"ttl"`             // own prefix index entry life, without KV events
	AssumeKVReuse        *bool          `yaml:"assume_kv_reuse"` // colocated: shared active blocks count once

	ConditionalDisagg    bool    `yaml:"conditional_disagg,omitempty"`
	ConditionalPolicy    string  `yaml:"conditional_disagg_policy"` // isl_bounding | token_cap
	BypassBelowTokens    int     `yaml:"conditional_prefill_bypass_below_tokens"`
	EffISLThreshold      int     `yaml:"eff_isl_threshold"`       // tokens
	EffISLRatioThreshold float64 `yaml:"eff_isl_ratio_threshold"` // in [0, 1]
	PrefillBusyTokens    int     `yaml:"prefill_busy_tokens,omitempty"`
	DecodeBusyTokens     int     `yaml:"decode_busy_tokens,omitempty"`
}

// LLMDRouter holds the llm-d scheduler's plugins.
type LLMDRouter struct {
	Scorers              []LLMDScorer `yaml:"scorers"`
	Picker               string       `yaml:"picker"`            // max-score | weighted-random
	NonCachedTokens      int          `yaml:"non_cached_tokens"` // 0 = never disaggregate
	LRUCapacityPerServer int          `yaml:"lru_capacity_per_server"`
	// MediumWeights weigh the blocks the precise-prefix-cache scorer finds
	// by the medium holding them (llm-d's gpu 1, cpu 0.8; disk and store,
	// missing from its table, 1).
	MediumWeights *MediumWeights `yaml:"medium_weights,omitempty"`
}

// MediumWeights are per-medium block weights: gpu is HBM, cpu the host
// tier.
type MediumWeights struct {
	GPU   *float64 `yaml:"gpu"`
	CPU   *float64 `yaml:"cpu"`
	Disk  *float64 `yaml:"disk"`
	Store *float64 `yaml:"store"`
}

// LLMDScorer is one weighted scorer.
type LLMDScorer struct {
	Name   string  `yaml:"name"`
	Weight float64 `yaml:"weight"`
}

// TopologyAwareRouter holds the network term of the topology-aware cost.
type TopologyAwareRouter struct {
	BlocksPerMs float64 `yaml:"blocks_per_ms"` // blocks of cost per ms of predicted KV transfer
}

// Router defaults.
const (
	defaultTTLNs       = 120e9
	defaultLLMDRefresh = 50e6 // the EPP's metrics refresh (RefreshMetricsInterval in llm-d's pkg/epp/server/options.go)
	defaultBypassBelow = 5000 // token_cap's conditional_prefill_bypass_below_tokens
	defaultBlocksPerMs = 1    // about an 8B model's prefill rate on one H100 (≈16 tokens/ms) at block size 16
	maxLRUCapacity     = 1 << 24
	maxRouterWeight    = 1e9 // beyond it a cost is a typo
)

// routerDefaults fills the sections the policy needs and every field of
// the sections present.
func (l *Loaded) routerDefaults() {
	rt := &l.Router
	if rt.Dynamo == nil && (rt.Policy == "dynamo" || rt.Policy == "topology_aware") {
		rt.Dynamo = &DynamoRouter{}
	}
	if rt.LLMD == nil && rt.Policy == "llmd" {
		rt.LLMD = &LLMDRouter{}
	}
	if rt.TopologyAware == nil && rt.Policy == "topology_aware" {
		rt.TopologyAware = &TopologyAwareRouter{}
	}
	if d := rt.Dynamo; d != nil {
		l.dynamoDefaults(d)
	}
	if m := rt.LLMD; m != nil {
		l.llmdDefaults(m)
	}
	if t := rt.TopologyAware; t != nil {
		fill(l, "router.topology_aware.blocks_per_ms", &t.BlocksPerMs, defaultBlocksPerMs)
	}
}

func (l *Loaded) dynamoDefaults(d *DynamoRouter) {
	def, cd := router.DefaultDynamoConfig(), router.DefaultConditionalDisagg()
	at := "router.dynamo."
	fill(l, at+"overlap_score_credit", &d.OverlapScoreCredit, def.OverlapScoreCredit)
	fill(l, at+"prefill_load_scale", &d.PrefillLoadScale, def.PrefillLoadScale)
	fill(l, at+"host_cache_hit_weight", &d.HostCacheHitWeight, def.HostCacheHitWeight)
	fill(l, at+"disk_cache_hit_weight", &d.DiskCacheHitWeight, def.DiskCacheHitWeight)
	fill(l, at+"ttl", &d.TTL, defaultTTLNs)
	fill(l, at+"eff_isl_threshold", &d.EffISLThreshold, cd.EffISLThreshold)
	fill(l, at+"eff_isl_ratio_threshold", &d.EffISLRatioThreshold, cd.EffISLRatioThreshold)
	fill(l, at+"conditional_disagg_policy", &d.ConditionalPolicy, "isl_bounding")
	fill(l, at+"conditional_prefill_bypass_below_tokens", &d.BypassBelowTokens, defaultBypassBelow)
	if d.UseKVEvents == nil {
		d.UseKVEvents = ptr(def.UseKVEvents)
	}
	if d.AssumeKVReuse == nil {
		d.AssumeKVReuse = ptr(def.AssumeKVReuse)
	}
}

func (l *Loaded) llmdDefaults(m *LLMDRouter) {
	def := router.DefaultLLMDConfig()
	if m.Scorers == nil {
		if n := strictyaml.Find(l.root, "router.llmd.scorers"); n == nil || n.Tag == "!!null" {
			m.Scorers = defaultScorers()
		}
	}
	for i := range m.Scorers {
		fill(l, fmt.Sprintf("router.llmd.scorers[%d].weight", i), &m.Scorers[i].Weight, 1)
	}
	fill(l, "router.llmd.picker", &m.Picker, def.Picker)
	if l.Router.Policy == "llmd" {
		fill(l, "router.refresh_interval", &l.Router.RefreshInterval, defaultLLMDRefresh)
	}
}

// defaultScorers is llm-d's default scorer list.
func defaultScorers() []LLMDScorer {
	var out []LLMDScorer
	for _, s := range router.DefaultLLMDConfig().Scorers {
		out = append(out, LLMDScorer{Name: s.Name, Weight: s.Weight})
	}
	return out
}

// validateRouter checks the router sections; errors name the field.
func (l *Loaded) validateRouter() error {
	rt := &l.Router
	if rt.RefreshInterval < 0 {
		return l.errorf("router.refresh_interval", "must not be negative (0 = refresh before every decision)")
	}
	if d := rt.Dynamo; d != nil {
		if err := l.validateDynamo(d); err != nil {
			return err
		}
	}
	if m := rt.LLMD; m != nil {
		if err := l.validateLLMD(m); err != nil {
			return err
		}
	}
	if t := rt.TopologyAware; t != nil && !weightOK(t.BlocksPerMs) {
		return l.errorf("router.topology_aware.blocks_per_ms", "must be in [0, %g], got %g", maxRouterWeight, t.BlocksPerMs)
	}
	if rt.Policy == "topology_aware" && rt.Dynamo.ConditionalDisagg {
		return l.errorf("router.dynamo.conditional_disagg", "does not apply to policy topology_aware, "+
			"whose (prefiller, decoder) pair search replaces it")
	}
	return nil
}

// weightOK reports whether x is a usable non-negative weight (not NaN).
func weightOK(x float64) bool { return x >= 0 && x <= maxRouterWeight }

// namedWeight is a weight and its field name, for validation.
type namedWeight struct {
	field string
	v     float64
}

func (l *Loaded) validateDynamo(d *DynamoRouter) error {
	at := "router.dynamo."
	weights := []namedWeight{
		{"overlap_score_credit", d.OverlapScoreCredit}, {"overlap_score_credit_decay", d.OverlapScoreCreditDecay},
		{"prefill_load_scale", d.PrefillLoadScale}, {"decode_active_request_weight", d.DecodeActiveRequestWeight},
		{"temperature", d.Temperature}, {"router_queue_threshold", d.RouterQueueThreshold},
	}
	// As Dynamo's KvRouterConfig validates them (lib/kv-router/src/scheduling/config.rs).
	for _, w := range []namedWeight{{"host_cache_hit_weight", d.HostCacheHitWeight}, {"disk_cache_hit_weight", d.DiskCacheHitWeight}} {
		if !(w.v >= 0 && w.v <= 1) {
			return l.errorf(at+w.field, "must be in [0, 1], as Dynamo requires, got %g", w.v)
		}
	}
	if d.KVOverlapScoreWeight != nil {
		weights = append(weights, namedWeight{"kv_overlap_score_weight", *d.KVOverlapScoreWeight})
	}
	for _, w := range weights {
		if !weightOK(w.v) {
			return l.errorf(at+w.field, "must be in [0, %g], got %g", maxRouterWeight, w.v)
		}
	}
	switch {
	case !*d.UseKVEvents && d.TTL <= 0:
		return l.errorf(at+"ttl", "must be positive when use_kv_events is false, got %s",
			units.FormatDuration(int64(d.TTL)))
	case d.EffISLThreshold < 0:
		return l.errorf(at+"eff_isl_threshold", "must not be negative, got %d", d.EffISLThreshold)
	case !(d.EffISLRatioThreshold >= 0 && d.EffISLRatioThreshold <= 1):
		return l.errorf(at+"eff_isl_ratio_threshold", "must be in [0, 1], got %g", d.EffISLRatioThreshold)
	case d.PrefillBusyTokens < 0:
		return l.errorf(at+"prefill_busy_tokens", "must not be negative, got %d", d.PrefillBusyTokens)
	case d.DecodeBusyTokens < 0:
		return l.errorf(at+"decode_busy_tokens", "must not be negative, got %d", d.DecodeBusyTokens)
	case d.ConditionalPolicy != "isl_bounding" && d.ConditionalPolicy != "token_cap":
		return l.errorf(at+"conditional_disagg_policy", "unknown policy %q (known: isl_bounding, token_cap)", d.ConditionalPolicy)
	case d.BypassBelowTokens < 1:
		return l.errorf(at+"conditional_prefill_bypass_below_tokens", "must be positive, got %d", d.BypassBelowTokens)
	case d.ConditionalDisagg && l.Pools[0].Role == "colocated":
		return l.errorf(at+"conditional_disagg", "needs prefill and decode pools; this cluster is colocated")
	}
	return nil
}

func (l *Loaded) validateLLMD(m *LLMDRouter) error {
	at := "router.llmd."
	if len(m.Scorers) == 0 {
		return l.errorf(at+"scorers", "at least one scorer is required (known: %s)", strings.Join(router.ScorerNames(), ", "))
	}
	seen := map[string]bool{}
	for i, s := range m.Scorers {
		f := fmt.Sprintf("%sscorers[%d]", at, i)
		switch {
		case !slices.Contains(router.ScorerNames(), s.Name):
			return l.errorf(f+".name", "unknown scorer %q (known: %s)", s.Name, strings.Join(router.ScorerNames(), ", "))
		case seen[s.Name]:
			return l.errorf(f+".name", "scorer %q is listed twice", s.Name)
		case !weightOK(s.Weight):
			return l.errorf(f+".weight", "must be in [0, %g], got %g", maxRouterWeight, s.Weight)
		}
		seen[s.Name] = true
	}
	switch {
	case !slices.Contains(router.PickerNames(), m.Picker):
		return l.errorf(at+"picker", "unknown picker %q (known: %s)", m.Picker, strings.Join(router.PickerNames(), ", "))
	case m.NonCachedTokens < 0:
		return l.errorf(at+"non_cached_tokens", "must not be negative (0 = never disaggregate), got %d", m.NonCachedTokens)
	case m.LRUCapacityPerServer < 0 || m.LRUCapacityPerServer > maxLRUCapacity:
		return l.errorf(at+"lru_capacity_per_server", "must be in [0, %d] blocks (0: each instance's KV pool), got %d",
			maxLRUCapacity, m.LRUCapacityPerServer)
	}
	if w := m.MediumWeights; w != nil {
		for k, v := range []*float64{w.GPU, w.CPU, w.Disk, w.Store} {
			if v != nil && !(*v >= 0 && *v <= 1) {
				name := [...]string{"gpu", "cpu", "disk", "store"}[k]
				return l.errorf(at+"medium_weights."+name, "must be in [0, 1], got %g", *v)
			}
		}
	}
	return nil
}

// buildRouter sets the configuration's router, its refresh interval and
// whether it needs prompt hashes, and collects deprecation warnings.
// Randomness comes from rng.
func (l *Loaded) buildRouter(b *Built, rng *rand.Rand) {
	rt := &l.Router
	cfg := b.Config
	cfg.RefreshIntervalNs = int64(rt.RefreshInterval)
	switch rt.Policy {
	case "least_loaded":
		cfg.Router = router.LeastLoaded{}
	case "dynamo":
		cfg.Router = router.NewDynamo(l.dynamoConfig(b), rng)
	case "topology_aware":
		cfg.Router = router.NewTopologyAware(l.dynamoConfig(b), rt.TopologyAware.BlocksPerMs, rng)
	case "llmd":
		cfg.Router = router.NewLLMD(llmdConfig(rt.LLMD), rng)
	default:
		cfg.Router = &router.RoundRobin{}
	}
	// Dynamo's decode router turns reuse off when disaggregated.
	cfg.RouterCountsSharedBlocks = (rt.Policy == "dynamo" || rt.Policy == "topology_aware") &&
		*rt.Dynamo.AssumeKVReuse && l.Pools[0].Role == "colocated"
}

// dynamoConfig translates the dynamo section, applying the deprecated
// weight (with a warning) over the fields it replaces.
func (l *Loaded) dynamoConfig(b *Built) router.DynamoConfig {
	d := l.Router.Dynamo
	cfg := router.DynamoConfig{OverlapScoreCredit: d.OverlapScoreCredit, OverlapScoreCreditDecay: d.OverlapScoreCreditDecay,
		PrefillLoadScale: d.PrefillLoadScale, DecodeActiveRequestWeight: d.DecodeActiveRequestWeight,
		HostCacheHitWeight: d.HostCacheHitWeight, DiskCacheHitWeight: d.DiskCacheHitWeight, Temperature: d.Temperature,
		QueueThreshold: d.RouterQueueThreshold, UseKVEvents: *d.UseKVEvents, TTLNs: int64(d.TTL),
		AssumeKVReuse: *d.AssumeKVReuse}
	if w := d.KVOverlapScoreWeight; w != nil {
		cfg.ApplyKVOverlapScoreWeight(*w)
		also := ""
		if *w == 0 {
			also = " and overlap_score_credit to 0"
		}
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s: router.dynamo.kv_overlap_score_weight is deprecated: "+
			"it sets prefill_load_scale to %g%s, overriding those fields; set them instead", l.File, *w, also))
	}
	if d.ConditionalDisagg {
		cfg.Conditional = &router.ConditionalDisagg{EffISLThreshold: d.EffISLThreshold,
			EffISLRatioThreshold: d.EffISLRatioThreshold, PrefillBusyTokens: d.PrefillBusyTokens,
			DecodeBusyTokens: d.DecodeBusyTokens}
		if d.ConditionalPolicy == "token_cap" {
			cfg.Conditional.TokenCap = d.BypassBelowTokens
		}
	}
	return cfg
}

func llmdConfig(m *LLMDRouter) router.LLMDConfig {
	cfg := router.LLMDConfig{Picker: m.Picker, NonCachedTokens: m.NonCachedTokens,
		LRUCapacityPerServer: m.LRUCapacityPerServer, MediumWeights: router.DefaultMediumWeights()}
	if w := m.MediumWeights; w != nil {
		for _, f := range []struct {
			from *float64
			to   *float64
		}{{w.GPU, &cfg.MediumWeights.GPU}, {w.CPU, &cfg.MediumWeights.CPU}, {w.Disk, &cfg.MediumWeights.Disk},
			{w.Store, &cfg.MediumWeights.Store}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
	}
	for _, s := range m.Scorers {
		cfg.Scorers = append(cfg.Scorers, router.WeightedScorer{Name: s.Name, Weight: s.Weight})
	}
	return cfg
}
