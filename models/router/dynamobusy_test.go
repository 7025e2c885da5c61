package router

import (
	"strings"
	"testing"
)

// busyWorkers: three colocated workers with a token budget of 100 and 100
// KV blocks, for a 64-token prompt (R = 4). Worker 0 has a given number of
// prefill tokens in flight (50: cost (50+64)/16 + 4 = 11.125); worker 1
// has 60 (11.75); worker 2 has none routed (cost 4 + 4 = 8, the
// cheapest) but reports 70 of its blocks in use.
func busyWorkers(active0 int) *Cluster {
	vs := []View{
		{Index: 0, MaxBatchedTokens: 100, TotalBlocks: 100, FreeBlocks: 100, ActivePrefillTokens: active0},
		{Index: 1, MaxBatchedTokens: 100, TotalBlocks: 100, FreeBlocks: 100, ActivePrefillTokens: 60},
		{Index: 2, MaxBatchedTokens: 100, TotalBlocks: 100, FreeBlocks: 30},
	}
	return testCluster(vs, nil, nil, nil)
}

// TestDynamoBusyThresholds: a worker past any set threshold is left out
// of the choice (the cheapest free one wins); when every worker is busy
// the request is rejected; unset, none is busy.
func TestDynamoBusyThresholds(t *testing.T) {
	for _, tc := range []struct {
		name          string
		blocks, frac  *float64
		tokens        *int
		active0, want int
	}{
		{"unset", nil, nil, nil, 50, 2},
		{"decode blocks 0.6: 2 busy (70 in use > 60)", ptr(0.6), nil, nil, 50, 0},
		{"decode blocks 0.75: 70 in use is under", ptr(0.75), nil, nil, 50, 2},
		{"and frac 0.5 of 100: 1 busy, 0 not (50 is not past 50)", ptr(0.6), ptr(0.5), nil, 50, 0},
		{"and frac 0.5, 0 at 51: all busy", ptr(0.6), ptr(0.5), nil, 51, Rejected},
		{"and tokens 55: 1 busy", ptr(0.6), nil, ptr(55), 50, 0},
		{"and tokens 55, 0 at 56: all busy", ptr(0.6), nil, ptr(55), 56, Rejected},
	} {
		cfg := DefaultDynamoConfig()
		cfg.ActiveDecodeBlocksThreshold, cfg.ActivePrefillTokensThresholdFrac, cfg.ActivePrefillTokensThreshold = tc.blocks, tc.frac, tc.tokens
		if err := cfg.Check(); err != nil {
			t.Fatal(err)
		}
		d := NewDynamo(cfg, seeded())
		if got := d.Route(request(64), busyWorkers(tc.active0)).Prefill; got != tc.want {
			t.Errorf("%s: routed to %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestDynamoBusyDisaggregated: under P/D a request is rejected when every
// decoder is busy at arrival; after its prefill, the busy decoders are
// left out, and if all are busy it decodes where the load is least.
func TestDynamoBusyDisaggregated(t *testing.T) {
	cfg := DefaultDynamoConfig()
	cfg.ActiveDecodeBlocksThreshold = ptr(0.5)
	dec := []View{{Index: 5, TotalBlocks: 100, FreeBlocks: 100}, {Index: 6, TotalBlocks: 100, FreeBlocks: 20, ActiveBlocks: 30}}
	c := testCluster([]View{{Index: 0, TotalBlocks: 100, FreeBlocks: 100}}, dec, nil, nil)
	d := NewDynamo(cfg, seeded())
	if got := d.Route(request(64), c); got.Prefill != 0 || got.Decode != DecodeLater {
		t.Fatalf("one decoder free: %+v", got)
	}
	c.Decode[0].ActiveBlocks = 40 // 6 is cheaper (30 < 40) but busy (80 in use > 50): 5 decodes
	if got := d.RouteDecode(request(64), c); got != 5 {
		t.Errorf("decoded on %d, want 5", got)
	}
	c.Decode[0].ActiveBlocks = 60 // both busy
	if got := d.Route(request(64), c); !got.IsRejected() || got.Held() {
		t.Errorf("every decoder busy: %+v, want rejected", got)
	}
	if got := d.RouteDecode(request(64), c); got != 6 { // 30 + 4 < 60 + 4
		t.Errorf("every decoder busy after the prefill: decoded on %d, want 6", got)
	}
}

// TestDynamoBusyCheck: the thresholds' ranges are Dynamo's.
func TestDynamoBusyCheck(t *testing.T) {
	for field, set := range map[string]func(c *DynamoConfig){
		"active_decode_blocks_threshold":       func(c *DynamoConfig) { c.ActiveDecodeBlocksThreshold = ptr(1.5) },
		"active_prefill_tokens_threshold":      func(c *DynamoConfig) { c.ActivePrefillTokensThreshold = ptr(-1) },
		"active_prefill_tokens_threshold_frac": func(c *DynamoConfig) { c.ActivePrefillTokensThresholdFrac = ptr(-0.1) },
	} {
		cfg := DefaultDynamoConfig()
		set(&cfg)
		if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v", field, err)
		}
	}
}
