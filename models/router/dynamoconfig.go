package router

import (
	"slices"
	"strings"

	"handoff/models/strictyaml"
	"handoff/models/units"
)

// DynamoConfig is Dynamo's KV router: the router.dynamo section of a
// scenario (YAML-tagged), its defaults (DefaultDynamoConfig) and its checks
// (Check), and NewDynamo's configuration
// (lib/kv-router/src/scheduling/config.rs, selector/default.rs). Per
// candidate worker w, with block size B, prompt length ISL and request
// blocks R = ⌊ISL/B⌋ (full blocks only, as Dynamo counts them):
//
//	cost_w   = PrefillLoadScale · max(0, (active_prefill_tokens_w + ISL)/B − credit_w)
//	         + (active_blocks_w + new_blocks_w) + DecodeActiveRequestWeight · outstanding_w
//	credit_w = OverlapScoreCredit · decay_w · device_overlap_blocks_w
//	         + HostCacheHitWeight · host_overlap_w + DiskCacheHitWeight · disk_overlap_w
//	decay_w  = 1 / (1 + OverlapScoreCreditDecay · ((active_prefill_w − min_v active_prefill_v)/B) / R)
//
// where active_prefill_tokens counts only the uncached part of each routed
// prompt until its prefill ends, and new_blocks_w is R, or with
// AssumeKVReuse (colocated) the request's blocks that no request active on
// w holds. host_overlap and disk_overlap are the worker's lower-tier runs
// past its device overlap (Cluster.TierOverlap): the host run, and the
// disk run with the shared store's after it, as Dynamo buckets External
// with Disk (tier_overlap_blocks_from_tiered_matches); 0 without tiers.
//
// host_overlap is the host run and disk_overlap the disk run; the shared
// store's run after them is credited apart, SharedCacheMultiplier per
// block, as Dynamo credits shared_beyond_device_blocks (worker_logit in
// lib/kv-router/src/scheduling/selector/default.rs).
//
// With ConditionalDisagg, in a disaggregated cluster, a request may
// prefill on its decoder instead of on a prefiller (dynamocond.go).
type DynamoConfig struct {
	OverlapScoreCredit        float64 `yaml:"overlap_score_credit"`         // blocks of prefill credited per cached device block (default 1)
	OverlapScoreCreditDecay   float64 `yaml:"overlap_score_credit_decay"`   // shrinks the credit on workers with excess prefill (default 0)
	PrefillLoadScale          float64 `yaml:"prefill_load_scale"`           // weight of the prefill term (default 1)
	DecodeActiveRequestWeight float64 `yaml:"decode_active_request_weight"` // blocks charged per outstanding request (default 0)
	HostCacheHitWeight        float64 `yaml:"host_cache_hit_weight"`        // blocks of prefill credited per host-tier block (default 0.75)
	DiskCacheHitWeight        float64 `yaml:"disk_cache_hit_weight"`        // per disk or store block (default 0.25)
	SharedCacheMultiplier     float64 `yaml:"shared_cache_multiplier"`      // per shared-store block past the device overlap (default 0; SGLang's HiCache sets 0.5)
	// KVOverlapScoreWeight is Dynamo's deprecated kv_overlap_score_weight:
	// set, it replaces PrefillLoadScale and at 0 also zeroes
	// OverlapScoreCredit (NewDynamo applies it).
	KVOverlapScoreWeight *float64 `yaml:"kv_overlap_score_weight,omitempty"`
	Temperature          float64  `yaml:"temperature"` // 0: lowest cost; > 0: softmax over min-max-normalised costs

	// QueueThreshold, when > 0, holds requests at the router while every
	// prefill candidate's active prefill tokens exceed QueueThreshold × its
	// token budget per step. 0 = never hold.
	QueueThreshold float64 `yaml:"router_queue_threshold,omitempty"`
	// QueuePolicy orders the held requests within a priority tier
	// (router_queue_policy): fcfs, lcfs or wspt (QueueKey).
	QueuePolicy string `yaml:"router_queue_policy"`

	// UseKVEvents takes device overlaps from the instances' caches (as KV
	// events report them); false predicts them from the router's own
	// decisions, each forgotten TTL after it was made.
	UseKVEvents bool           `yaml:"use_kv_events"`
	TTL         units.Duration `yaml:"ttl"`

	// AssumeKVReuse (router_assume_kv_reuse, default true) counts blocks
	// that active requests on a worker share once in its decode load; it
	// applies to colocated workers only, since Dynamo's decode router in a
	// disaggregated cluster turns it off. The core supplies the count
	// (Cluster.NewBlocks).
	AssumeKVReuse bool `yaml:"assume_kv_reuse"`

	// TrackOutputBlocks (router_track_output_blocks, default false) counts
	// in a worker's decode load the blocks its requests' output has
	// filled, as the responses stream; the core supplies them with the
	// active blocks (OutputBlockCounter), as of each refresh. Without an expected output length (agent_hints.osl, which
	// handoff's requests do not send) Dynamo weighs each such block whole.
	TrackOutputBlocks bool `yaml:"router_track_output_blocks"`

	ConditionalDisagg    bool    `yaml:"conditional_disagg,omitempty"`
	ConditionalPolicy    string  `yaml:"conditional_disagg_policy"`               // isl_bounding | prefill_load | isl_or_load | token_cap
	ConditionalPeekCost  string  `yaml:"conditional_peek_cost"`                   // decode (Dynamo's) | full (handoff's before)
	BypassBelowTokens    int     `yaml:"conditional_prefill_bypass_below_tokens"` // token_cap's cap
	EffISLThreshold      int     `yaml:"eff_isl_threshold"`                       // tokens
	EffISLRatioThreshold float64 `yaml:"eff_isl_ratio_threshold"`                 // in [0, 1]
	// PrefillBusyThreshold is the share of its token budget past which the
	// prefiller Dynamo would pick is busy; unset, router_queue_threshold's
	// (and with that 0, never busy).
	PrefillBusyThreshold *float64 `yaml:"prefill_busy_threshold,omitempty"`
	// DecodeBusyThreshold is the share of its KV blocks past which the
	// decoder's decode blocks veto a local prefill; unset, no veto.
	DecodeBusyThreshold *float64 `yaml:"decode_busy_threshold,omitempty"`

	// The frontend's busy thresholds (dynamobusy.go): a worker past any
	// set one is left out of the choice, and a request finding every
	// worker busy is rejected. Unset (Dynamo's default): never busy.
	ActiveDecodeBlocksThreshold      *float64 `yaml:"active_decode_blocks_threshold,omitempty"`       // share of its KV blocks, in [0, 1]
	ActivePrefillTokensThreshold     *int     `yaml:"active_prefill_tokens_threshold,omitempty"`      // tokens
	ActivePrefillTokensThresholdFrac *float64 `yaml:"active_prefill_tokens_threshold_frac,omitempty"` // share of its token budget per step

	// SessionAffinityTTL, when set, sends a session's turns to the worker
	// its first turn was routed to while the session is used at least
	// this often (dynamosession.go); unset (Dynamo's default): no
	// affinity.
	SessionAffinityTTL *units.Duration `yaml:"session_affinity_ttl,omitempty"`
}

// The conditional disaggregation policies.
const (
	ConditionalISLBounding = "isl_bounding"
	ConditionalPrefillLoad = "prefill_load"
	ConditionalISLOrLoad   = "isl_or_load"
	ConditionalTokenCap    = "token_cap"
)

// ConditionalPolicies lists the conditional disaggregation policies.
func ConditionalPolicies() []string {
	return []string{ConditionalISLBounding, ConditionalPrefillLoad, ConditionalISLOrLoad, ConditionalTokenCap}
}

// The costs a conditional disaggregation peek may price decoders by.
const (
	PeekDecode = "decode" // Dynamo's decode worker_logit
	PeekFull   = "full"   // the full cost, prefill term included
)

// The router queue's orders within a priority tier.
const (
	QueueFCFS = "fcfs"
	QueueLCFS = "lcfs"
	QueueWSPT = "wspt"
)

// QueuePolicies lists the router queue's orders.
func QueuePolicies() []string { return []string{QueueFCFS, QueueLCFS, QueueWSPT} }

// DefaultDynamoConfig returns Dynamo's defaults: credit 1, decay 0, scale
// 1, request weight 0, host 0.75, disk 0.25, shared store 0, temperature 0,
// KV events on, ttl 120 s, KV reuse assumed, no queue threshold (router
// queueing is off by default in Dynamo since v1.4) and fcfs when it
// queues, no conditional disaggregation (when on: isl_bounding at 2048
// tokens and ratio 0.7, decoders peeked by the decode cost, no busy
// thresholds of its own; token_cap at 5000 tokens).
func DefaultDynamoConfig() DynamoConfig {
	return DynamoConfig{OverlapScoreCredit: 1, PrefillLoadScale: 1, HostCacheHitWeight: 0.75,
		DiskCacheHitWeight: 0.25, UseKVEvents: true, TTL: 120e9, AssumeKVReuse: true, QueuePolicy: QueueFCFS,
		ConditionalPolicy: ConditionalISLBounding, ConditionalPeekCost: PeekDecode, BypassBelowTokens: 5000,
		EffISLThreshold: 2048, EffISLRatioThreshold: 0.7}
}

// MaxWeight bounds every router weight and threshold: beyond it a cost is
// a typo.
const MaxWeight = 1e9

// weightOK reports whether x is a usable non-negative weight (not NaN).
func weightOK(x float64) bool { return x >= 0 && x <= MaxWeight }

// namedWeight is a weight and its field name, for Check.
type namedWeight struct {
	field string
	v     float64
}

// Check validates the section; errors name the field relative to it.
func (c *DynamoConfig) Check() error {
	// As Dynamo's KvRouterConfig validates them (lib/kv-router/src/scheduling/config.rs).
	for _, w := range []namedWeight{{"host_cache_hit_weight", c.HostCacheHitWeight}, {"disk_cache_hit_weight", c.DiskCacheHitWeight}} {
		if !(w.v >= 0 && w.v <= 1) {
			return strictyaml.Fieldf(w.field, "must be in [0, 1], as Dynamo requires, got %g", w.v)
		}
	}
	weights := []namedWeight{
		{"overlap_score_credit", c.OverlapScoreCredit}, {"overlap_score_credit_decay", c.OverlapScoreCreditDecay},
		{"prefill_load_scale", c.PrefillLoadScale}, {"decode_active_request_weight", c.DecodeActiveRequestWeight},
		{"temperature", c.Temperature}, {"router_queue_threshold", c.QueueThreshold},
		{"shared_cache_multiplier", c.SharedCacheMultiplier},
	}
	if c.KVOverlapScoreWeight != nil {
		weights = append(weights, namedWeight{"kv_overlap_score_weight", *c.KVOverlapScoreWeight})
	}
	for _, w := range weights {
		if !weightOK(w.v) {
			return strictyaml.Fieldf(w.field, "must be in [0, %g], got %g", MaxWeight, w.v)
		}
	}
	if err := c.checkBusy(); err != nil {
		return err
	}
	if err := c.checkSession(); err != nil {
		return err
	}
	return c.checkConditional()
}

// checkConditional checks the index and conditional disaggregation fields.
func (c *DynamoConfig) checkConditional() error {
	switch {
	case !c.UseKVEvents && c.TTL <= 0:
		return strictyaml.Fieldf("ttl", "must be positive when use_kv_events is false, got %s",
			units.FormatDuration(int64(c.TTL)))
	case c.EffISLThreshold < 0:
		return strictyaml.Fieldf("eff_isl_threshold", "must not be negative, got %d", c.EffISLThreshold)
	case !(c.EffISLRatioThreshold >= 0 && c.EffISLRatioThreshold <= 1):
		return strictyaml.Fieldf("eff_isl_ratio_threshold", "must be in [0, 1], got %g", c.EffISLRatioThreshold)
	case c.PrefillBusyThreshold != nil && !weightOK(*c.PrefillBusyThreshold):
		return strictyaml.Fieldf("prefill_busy_threshold", "must be in [0, %g], got %g", MaxWeight, *c.PrefillBusyThreshold)
	case c.DecodeBusyThreshold != nil && !weightOK(*c.DecodeBusyThreshold):
		return strictyaml.Fieldf("decode_busy_threshold", "must be in [0, %g], got %g", MaxWeight, *c.DecodeBusyThreshold)
	case !slices.Contains(ConditionalPolicies(), c.ConditionalPolicy):
		return strictyaml.Fieldf("conditional_disagg_policy", "unknown policy %q (known: %s)", c.ConditionalPolicy,
			strings.Join(ConditionalPolicies(), ", "))
	case c.ConditionalPeekCost != PeekDecode && c.ConditionalPeekCost != PeekFull:
		return strictyaml.Fieldf("conditional_peek_cost", "unknown cost %q (known: %s, %s)", c.ConditionalPeekCost,
			PeekDecode, PeekFull)
	case !slices.Contains(QueuePolicies(), c.QueuePolicy):
		return strictyaml.Fieldf("router_queue_policy", "unknown policy %q (known: %s)", c.QueuePolicy,
			strings.Join(QueuePolicies(), ", "))
	case c.BypassBelowTokens < 1:
		return strictyaml.Fieldf("conditional_prefill_bypass_below_tokens", "must be positive, got %d", c.BypassBelowTokens)
	}
	return nil
}

// ApplyKVOverlapScoreWeight honours Dynamo's deprecated
// kv_overlap_score_weight w: it replaces PrefillLoadScale, and when exactly
// 0 also sets OverlapScoreCredit to 0. It wins over both.
func (c *DynamoConfig) ApplyKVOverlapScoreWeight(w float64) {
	c.PrefillLoadScale = w
	if w == 0 {
		c.OverlapScoreCredit = 0
	}
}
