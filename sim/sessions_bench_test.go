package sim_test

import (
	"testing"

	"handoff/scenarios"
	"handoff/sim"
)

// BenchmarkRunSessions runs the shipped multi-turn scenario at 20,000
// sessions (~90,000 turns) and reports turns per wall-second and the heap
// held per record after the run.
func BenchmarkRunSessions(b *testing.B) {
	b.ReportAllocs()
	var res *sim.Result
	for b.Loop() {
		l, err := scenarios.Load("../scenarios/multi-turn.yaml", scenarios.Set{Path: "workload.sessions.sessions", Value: "20000"},
			scenarios.Set{Path: "workload.sessions.arrival.rate", Value: "40/s"}, scenarios.Set{Path: "pools.chat.count", Value: "10"})
		if err != nil {
			b.Fatal(err)
		}
		built, err := l.Build()
		if err != nil {
			b.Fatal(err)
		}
		if res, err = sim.Run(built.Config); err != nil {
			b.Fatal(err)
		}
		built.Close()
	}
	n := float64(len(res.Records))
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(retainedPerRequest(&res, n), "B/request-retained")
}
