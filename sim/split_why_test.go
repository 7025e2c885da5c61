package sim

import (
	"strings"
	"testing"

	"handoff/models/engine"
	"handoff/models/router"
)

// TestNewSplitSaysWhy: a fleet splits only when nothing couples its
// instances, and each coupling is named.
func TestNewSplitSaysWhy(t *testing.T) {
	base := func() *Config {
		return &Config{Router: &router.RoundRobin{}, Source: &sliceSource{},
			Instances: instances(RoleColocated, 4, engineCfg(t, 64, 256, 8, true), linearTimer(1000, 10))}
	}
	cases := []struct {
		name   string
		change func(*Config)
		why    string // "" splits
	}{
		{"independent", func(*Config) {}, ""},
		{"a front end", func(c *Config) { c.Frontend = Frontend{LatencyNs: 5, TokenizeNsPerToken: 2} }, ""},
		{"one core", func(*Config) {}, "one instance or one core"},
		{"one instance", func(c *Config) { c.Instances = c.Instances[:1] }, "one instance or one core"},
		{"a load-aware router", func(c *Config) { c.Router = &router.LeastLoaded{} }, "router reads state"},
		{"a changing fleet", func(c *Config) { c.Scaling = []PoolScaling{{}} }, "fleet changes or fails"},
		{"faults", func(c *Config) { c.Faults = []Fault{{}} }, "fleet changes or fails"},
		{"a closed loop", func(c *Config) { c.Client.Concurrency = 4 }, "closed loop"},
		{"client timeouts", func(c *Config) { c.Client.TimeoutNs = 1e9 }, "gives up"},
		{"a tracer", func(c *Config) { c.Tracer = nopTracer{} }, "traces"},
		{"P/D", func(c *Config) { c.Instances[3].Role = RoleDecode }, "hand requests to each other"},
		{"tiers", func(c *Config) {
			c.Instances[0].Engine.Tiers = []*engine.Tier{{Kind: engine.TierHost}}
		}, "lower KV tiers"},
		{"a data-parallel group", func(c *Config) { c.Instances[0].DPRanks = 2 }, "data-parallel"},
		{"context ranges", func(c *Config) { c.Instances[0].ContextRange = [2]int{0, 100} }, "context-length ranges"},
		{"unequal capacities", func(c *Config) { c.Instances[1].Engine.NumBlocks = 32 }, "different context"},
	}
	for _, tc := range cases {
		cfg := base()
		tc.change(cfg)
		cores := 2
		if tc.name == "one core" {
			cores = 1
		}
		sp, why := NewSplit(cfg, cores)
		if (sp != nil) != (tc.why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%s: split %v, why %q; want why containing %q", tc.name, sp != nil, why, tc.why)
		}
	}
	if sp, _ := NewSplit(base(), 16); sp == nil || sp.Shards() != 4 {
		t.Errorf("4 instances on 16 cores: want 4 shards")
	}
}

// nopTracer is a Tracer that keeps nothing.
type nopTracer struct{}

func (nopTracer) Span(int64, Track, string, int64, int64)  {}
func (nopTracer) Instant(int64, Track, string, int64)      {}
func (nopTracer) Flow(int64, Track, int64, Track, int64)   {}
func (nopTracer) Counter(Track, string, int64, float64)    {}
func (nopTracer) InstanceSpan(Track, string, int64, int64) {}
