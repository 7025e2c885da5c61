package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"handoff/models/router"
	"handoff/results"
)

// flowControlRun runs five requests on one colocated instance that runs
// one sequence at a time (10 ms steps), behind llm-d with flow control at
// queue depth 1 (so one request waiting saturates the pool) and a current
// view: A, B, C, E of priority 1 arrive at 0, 1, 2 and 4 ms, D of
// priority 0 at 3 ms.
func flowControlRun(t *testing.T, enabled bool) *Result {
	t.Helper()
	var reqs []Request
	for k, class := range []uint8{1, 1, 1, 0, 1} {
		reqs = append(reqs, Request{ArrivalNs: int64(k) * 1e6, PromptTokens: 16, OutputTokens: 3, Class: class})
	}
	cfg := router.DefaultLLMDConfig()
	cfg.FlowControl = &router.FlowControl{Enabled: enabled, QueueDepthThreshold: 1, KVCacheUtilThreshold: 1}
	c := &Config{Instances: instances(RoleColocated, 1, engineCfg(t, 1000, 8192, 1, false), linearTimer(10e6, 0)),
		Source: &sliceSource{reqs: reqs}, Router: router.NewLLMD(cfg, rand.New(rand.NewPCG(1, 2))),
		Priorities: []int32{0, 1}}
	return mustRun(t, c)
}

// TestFlowControlBands: while one request waits on the instance the pool
// is saturated, and flow control holds every later one in the gateway,
// whatever its band; as the saturation clears it dispatches the higher
// band's D first, then C and E in their order of arrival. Their wait is
// the router's component of their TTFT. Without flow control they reach
// the instance, which serves them first come first served, in arrival
// order. The gateway polls while it holds (llm-d's 1 ms dispatch
// ticker): a request leaves it within a millisecond of the saturation
// clearing. Two runs are the same.
func TestFlowControlBands(t *testing.T) {
	order := func(res *Result) []int64 {
		recs := append([]results.Record(nil), res.Records...)
		for i := 1; i < len(recs); i++ { // by first token: insertion sort of five
			for j := i; j > 0 && recs[j].FirstTokenNs < recs[j-1].FirstTokenNs; j-- {
				recs[j], recs[j-1] = recs[j-1], recs[j]
			}
		}
		var ids []int64
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	gated := flowControlRun(t, true)
	if got, want := order(gated), []int64{0, 1, 3, 2, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("flow control serves %v, want %v (A, B, then D of the higher band, then C and E)", got, want)
	}
	// A ends at 30 ms and B leaves the instance's queue: within the next
	// millisecond a poll finds the pool unsaturated and dispatches D, which
	// waits on the instance until B ends at 60 ms; then C, then E at 90 ms.
	for id, clearNs := range map[int]int64{3: 30e6, 2: 60e6, 4: 90e6} {
		rec := gated.Records[id]
		if at := rec.ArrivalNs + rec.Time[results.TRouter]; at < clearNs || at > clearNs+1e6 {
			t.Errorf("request %d left the gateway at %d ns, want within 1 ms of %d", id, at, clearNs)
		}
	}
	if rec := gated.Records[1]; rec.Time[results.TRouter] != 0 {
		t.Errorf("B passed an unsaturated pool, yet waited %d ns at the router", rec.Time[results.TRouter])
	}
	if got, want := order(flowControlRun(t, false)), []int64{0, 1, 2, 3, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("without flow control %v, want arrival order %v", got, want)
	}
	if d := sameResult(flowControlRun(t, true), gated); d != "" {
		t.Errorf("two runs differ: %s", d)
	}
}
