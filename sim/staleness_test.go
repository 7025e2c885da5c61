package sim

import (
	"testing"

	"handoff/models/kv"
	"handoff/models/router"
	"handoff/results"
)

// stalenessRun sends a burst of 20 requests, 1 ms apart, sharing a 4-block
// prefix, to two colocated instances that run one sequence at a time in
// 10 ms steps, so that a queue builds wherever requests go. The llm-d
// router scores prefix-cache (weight 1) and queue (weight 2). It returns
// how many requests each instance prefilled.
func stalenessRun(t *testing.T, refreshNs int64) [2]int {
	var reqs []Request
	for i := range 20 {
		reqs = append(reqs, Request{ID: int64(i), ArrivalNs: int64(i) * 1e6, PromptTokens: 80, OutputTokens: 2,
			Prefix: []kv.Segment{{ID: 7, Tokens: 64}}})
	}
	cfg := router.DefaultLLMDConfig()
	cfg.Scorers = []router.WeightedScorer{{Name: router.ScorerPrefixCache, Weight: 1}, {Name: router.ScorerQueue, Weight: 2}}
	ec := engineCfg(t, 1000, 4096, 1, true)
	res := mustRun(t, &Config{Name: "staleness", Instances: instances(RoleColocated, 2, ec, linearTimer(10e6, 0)),
		Router: router.NewLLMD(cfg, NewStreams(1).Stream("router")), Source: &sliceSource{reqs: reqs},
		RefreshIntervalNs: refreshNs})
	var counts [2]int
	for _, r := range res.Records {
		if r.Status != results.Completed {
			t.Fatalf("request %d ended %v", r.ID, r.Status)
		}
		counts[r.PrefillInstance]++
	}
	return counts
}

// TestStaleViewChangesRouting: with the view refreshed before every
// decision (the oracle), the queue scorer sees each instance's waiting
// sequences and spreads the burst over both; with a 1 s refresh the whole
// burst sees the empty queues of t = 0, the queue scores tie, and the
// prefix-cache score sends every request after the first to the instance
// the first one went to.
func TestStaleViewChangesRouting(t *testing.T) {
	oracle := stalenessRun(t, 0)
	if oracle[0] < 5 || oracle[1] < 5 {
		t.Errorf("oracle routed %v, want the burst spread over both instances", oracle)
	}
	stale := stalenessRun(t, 1e9)
	if stale[0] != 20 && stale[1] != 20 {
		t.Errorf("1 s refresh routed %v, want all 20 on one instance", stale)
	}
}
