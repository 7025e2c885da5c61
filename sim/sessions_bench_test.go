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
