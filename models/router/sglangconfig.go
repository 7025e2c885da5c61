package router

import (
	"slices"
	"strings"

	"handoff/models/strictyaml"
	"handoff/models/units"
)

// SGLang's policies (sgl-model-gateway/src/policies): the cache-aware
// one and the three load-only ones a leg may use instead.
const (
	SGLangCacheAware = "cache_aware"  // cache_aware.rs CacheAwarePolicy
	SGLangRoundRobin = "round_robin"  // round_robin.rs RoundRobinPolicy
	SGLangRandom     = "random"       // random.rs RandomPolicy
	SGLangPowerOfTwo = "power_of_two" // power_of_two.rs PowerOfTwoPolicy
)

// SGLangPolicies lists the policies router.sglang's policy fields take.
func SGLangPolicies() []string {
	return []string{SGLangCacheAware, SGLangRoundRobin, SGLangRandom, SGLangPowerOfTwo}
}

// What the cache-aware policy does when the best match is below
// cache_threshold.
const (
	SGLangMissLeastLoad    = "least_load"    // the gateway: the worker with the fewest requests in flight
	SGLangMissSmallestTree = "smallest_tree" // sgl-router before it: the worker whose tree is smallest
)

// SGLangMisses lists cache_miss's values.
func SGLangMisses() []string { return []string{SGLangMissLeastLoad, SGLangMissSmallestTree} }

// SGLangConfig is the router.sglang section of a scenario: SGLang's
// router (sgl-model-gateway) as its command line and CacheAwareConfig
// take it.
type SGLangConfig struct {
	Policy              string         `yaml:"policy"`                // --policy: cache_aware | round_robin | random | power_of_two
	PrefillPolicy       string         `yaml:"prefill_policy"`        // --prefill-policy (P/D): "" = policy
	DecodePolicy        string         `yaml:"decode_policy"`         // --decode-policy (P/D): "" = policy
	CacheThreshold      float64        `yaml:"cache_threshold"`       // --cache-threshold: least match ratio, exceeded, for the best-matching worker
	BalanceAbsThreshold int            `yaml:"balance_abs_threshold"` // --balance-abs-threshold: requests between the most and least loaded, exceeded, for imbalance
	BalanceRelThreshold float64        `yaml:"balance_rel_threshold"` // --balance-rel-threshold: ratio of the most to the least loaded, exceeded, for imbalance
	EvictionInterval    units.Duration `yaml:"eviction_interval"`     // --eviction-interval (seconds upstream): between the trees' LRU evictions; 0 = never
	MaxTreeSize         int            `yaml:"max_tree_size"`         // --max-tree-size: characters a worker's tree keeps at an eviction
	CacheMiss           string         `yaml:"cache_miss"`            // below the threshold: least_load (the gateway) | smallest_tree (sgl-router before it)
}

// DefaultSGLangConfig returns the gateway's defaults (its CLI's and
// CacheAwareConfig's): cache_aware on every leg, threshold 0.3, balance
// thresholds 64 requests and 1.5×, eviction every 120 s down to 2^26
// characters a worker, the least loaded worker on a miss.
func DefaultSGLangConfig() SGLangConfig {
	return SGLangConfig{Policy: SGLangCacheAware, CacheThreshold: 0.3, BalanceAbsThreshold: 64,
		BalanceRelThreshold: 1.5, EvictionInterval: 120e9, MaxTreeSize: 1 << 26, CacheMiss: SGLangMissLeastLoad}
}

// maxSGLangTreeSize bounds max_tree_size (characters).
const maxSGLangTreeSize = 1 << 40

// Check validates the section; errors name the field relative to it.
func (c *SGLangConfig) Check() error {
	for _, f := range []struct {
		name, v string
		empty   bool
	}{{"policy", c.Policy, false}, {"prefill_policy", c.PrefillPolicy, true}, {"decode_policy", c.DecodePolicy, true}} {
		if !(f.empty && f.v == "") && !slices.Contains(SGLangPolicies(), f.v) {
			return strictyaml.Fieldf(f.name, "unknown policy %q (known: %s)", f.v, strings.Join(SGLangPolicies(), ", "))
		}
	}
	switch {
	case !(c.CacheThreshold >= 0 && c.CacheThreshold <= 1):
		return strictyaml.Fieldf("cache_threshold", "must be in [0, 1], got %g", c.CacheThreshold)
	case c.BalanceAbsThreshold < 0:
		return strictyaml.Fieldf("balance_abs_threshold", "must not be negative, got %d", c.BalanceAbsThreshold)
	case !(c.BalanceRelThreshold >= 0 && c.BalanceRelThreshold <= MaxWeight):
		return strictyaml.Fieldf("balance_rel_threshold", "must be in [0, %g], got %g", MaxWeight, c.BalanceRelThreshold)
	case c.EvictionInterval < 0:
		return strictyaml.Fieldf("eviction_interval", "must not be negative (0 = never evict), got %v", c.EvictionInterval)
	case c.MaxTreeSize < 0 || c.MaxTreeSize > maxSGLangTreeSize:
		return strictyaml.Fieldf("max_tree_size", "must be in [0, %d] characters, got %d", maxSGLangTreeSize, c.MaxTreeSize)
	case !slices.Contains(SGLangMisses(), c.CacheMiss):
		return strictyaml.Fieldf("cache_miss", "unknown choice %q (known: %s)", c.CacheMiss, strings.Join(SGLangMisses(), ", "))
	}
	return nil
}

// legPolicy is the policy of the prefill leg (decode false) or the
// decode leg.
func (c *SGLangConfig) legPolicy(decode bool) string {
	p := c.PrefillPolicy
	if decode {
		p = c.DecodePolicy
	}
	if p == "" {
		return c.Policy
	}
	return p
}
