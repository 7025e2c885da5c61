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
	cfg := router.DefaultLLMDConfig()
	cfg.FlowControl = &router.FlowControl{Enabled: enabled, QueueDepthThreshold: 1, KVCacheUtilThreshold: 1}
	return bandsRun(t, router.NewLLMD(cfg, rand.New(rand.NewPCG(1, 2))))
}

// bandsRun runs the five requests through rt.
func bandsRun(t *testing.T, rt router.Router) *Result {
	t.Helper()
	var reqs []Request
	for k, class := range []uint8{1, 1, 1, 0, 1} {
		reqs = append(reqs, Request{ArrivalNs: int64(k) * 1e6, PromptTokens: 16, OutputTokens: 3, Class: class})
	}
	c := &Config{Instances: instances(RoleColocated, 1, engineCfg(t, 1000, 8192, 1, false), linearTimer(10e6, 0)),
		Source: &sliceSource{reqs: reqs}, Router: rt, Priorities: []int32{0, 1}}
	return mustRun(t, c)
}

// firstTokenOrder lists the records' IDs by first token.
func firstTokenOrder(res *Result) []int64 {
	recs := append([]results.Record(nil), res.Records...)
	for i := 1; i < len(recs); i++ { // insertion sort of a few
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
	order := firstTokenOrder
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

// TestDynamoQueueTiers: Dynamo's router queue, on while its threshold
// holds requests (every worker's pending prefill tokens above threshold ×
// its token budget: here any request not yet prefilled), dispatches the
// higher tier first — a class's priority as strict_priority — and each
// tier in arrival order: A's prefill ends at 10 ms and D goes, then B, C
// and E as each prefill ends. Without a threshold the router holds
// nothing and the instance serves them in arrival order.
func TestDynamoQueueTiers(t *testing.T) {
	cfg := router.DefaultDynamoConfig()
	cfg.QueueThreshold = 0.001 // 8 tokens of the 8,192 budget
	if got, want := firstTokenOrder(bandsRun(t, router.NewDynamo(cfg, rand.New(rand.NewPCG(1, 2))))), []int64{0, 3, 1, 2, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("Dynamo's queue serves %v, want %v", got, want)
	}
	cfg.QueueThreshold = 0
	if got, want := firstTokenOrder(bandsRun(t, router.NewDynamo(cfg, rand.New(rand.NewPCG(1, 2))))), []int64{0, 1, 2, 3, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("without a queue %v, want %v", got, want)
	}
}
