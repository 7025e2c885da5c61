package sim_test

import (
	"testing"

	"handoff/scenarios"
)

// BenchmarkRunSessions runs the shipped multi-turn scenario at 20,000
// sessions (~90,000 turns) and reports turns per wall-second and the heap
// held per record after the run.
func BenchmarkRunSessions(b *testing.B) {
	benchRun(b, "../scenarios/multi-turn.yaml", scenarios.Set{Path: "workload.sessions.sessions", Value: "20000"},
		scenarios.Set{Path: "workload.sessions.arrival.rate", Value: "40/s"}, scenarios.Set{Path: "pools.chat.count", Value: "10"})
}

// offloadSets scales the shipped host-tier scenario to 10,000
// conversations (~70,000 turns) on 10 instances.
var offloadSets = []scenarios.Set{{Path: "workload.sessions.sessions", Value: "10000"},
	{Path: "workload.sessions.arrival.rate", Value: "15/s"}, {Path: "pools.chat.count", Value: "10"}}

// BenchmarkRunOffload runs it with its host tier, BenchmarkRunOffloadNoTiers
// without: the difference per turn is what the tier costs.
func BenchmarkRunOffload(b *testing.B) {
	benchRun(b, "../scenarios/multi-turn-offload.yaml", offloadSets...)
}

func BenchmarkRunOffloadNoTiers(b *testing.B) {
	benchRun(b, "../scenarios/multi-turn-offload.yaml",
		append(offloadSets, scenarios.Set{Path: "pools.chat.kv_tiers", Value: "[]"})...)
}
