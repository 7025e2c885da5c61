package router

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFlowControlSaturation: each instance scores the larger of its
// waiting over the queue depth threshold and its KV usage over the KV
// threshold, the pool their average over both legs; at 1 or more llm-d
// holds the request, below it routes.
func TestFlowControlSaturation(t *testing.T) {
	f := DefaultFlowControl() // 5 waiting, 0.8 KV
	f.Enabled = true
	c := &Cluster{
		Prefill: []View{{Index: 0, Waiting: 10, TotalBlocks: 100, FreeBlocks: 100}}, // max(2, 0) = 2
		Decode: []View{{Index: 1, Waiting: 1, TotalBlocks: 100, FreeBlocks: 60}, // max(0.2, 0.5) = 0.5
			{Index: 2, TotalBlocks: 100, FreeBlocks: 100}}, // 0
	}
	if got, want := f.Saturation(c), (2+0.5+0)/3; got != want {
		t.Errorf("saturation %g, want %g", got, want)
	}
	cfg := DefaultLLMDConfig()
	cfg.FlowControl = &f
	l := NewLLMD(cfg, rand.New(rand.NewPCG(1, 2)))
	if d := l.Route(&Request{PromptTokens: 16}, c); d.Held() {
		t.Errorf("saturation 0.83: held %+v, want routed", d)
	}
	c.Decode[1].Waiting = 3 // max(0.6, 0) : (2 + 0.5 + 0.6)/3 > 1
	if d := l.Route(&Request{PromptTokens: 16}, c); !d.Held() {
		t.Errorf("saturation 1.03: %+v, want held", d)
	}
	if f.Saturation(&Cluster{}) != 1 {
		t.Error("a pool without instances is saturated")
	}
	f.Enabled = false
	if d := l.Route(&Request{PromptTokens: 16}, c); d.Held() {
		t.Error("flow control off: held")
	}
}

// TestFlowControlCheck: thresholds outside llm-d's bounds are errors
// naming the field.
func TestFlowControlCheck(t *testing.T) {
	for _, tc := range []struct {
		edit func(*FlowControl)
		want string
	}{
		{func(f *FlowControl) { f.QueueDepthThreshold = 0 }, "flow_control.queue_depth_threshold: must be in [1,"},
		{func(f *FlowControl) { f.KVCacheUtilThreshold = 0 }, "flow_control.kv_cache_util_threshold: must be in (0, 1], got 0"},
		{func(f *FlowControl) { f.KVCacheUtilThreshold = 1.5 }, "flow_control.kv_cache_util_threshold: must be in (0, 1], got 1.5"},
	} {
		f := DefaultFlowControl()
		tc.edit(&f)
		cfg := DefaultLLMDConfig()
		cfg.FlowControl = &f
		if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
