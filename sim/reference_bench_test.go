package sim_test

import (
	"fmt"
	"runtime"
	"testing"

	"handoff/scenarios"
	"handoff/sim"
)

// referenceFile is the reference workload (issue-style comparison with
// other simulators): Qwen3-14B on H100s, colocated, 8 req/s per instance.
const referenceFile = "../scenarios/perf/reference.yaml"

// referenceSets scales the reference workload to n instances at 8 req/s
// each, with requests requests in all.
func referenceSets(n, requests int) []scenarios.Set {
	return []scenarios.Set{
		{Path: "pools.vllm.count", Value: fmt.Sprint(n)},
		{Path: "workload.synthetic.arrival.rate", Value: fmt.Sprintf("%d/s", 8*n)},
		{Path: "workload.synthetic.requests", Value: fmt.Sprint(requests)},
	}
}

// BenchmarkReference runs the reference workload, 1,000,000 requests, on
// 1, 64, 256 and 1,024 instances, whole (load, build, run), and reports
// simulated requests per wall-second, events per request and the wall
// time per event.
func BenchmarkReference(b *testing.B) {
	for _, n := range []int{1, 64, 256, 1024} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			benchReference(b, referenceSets(n, 1_000_000))
		})
	}
}

func benchReference(b *testing.B, sets []scenarios.Set) {
	b.ReportAllocs()
	var requests, events int64
	for b.Loop() {
		res := loadAndRun(b, referenceFile, sets)
		requests += int64(len(res.Records))
		events += res.Events
	}
	b.ReportMetric(float64(requests)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(events)/float64(requests), "events/request")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// loadAndRun loads file with sets, builds it and runs it.
func loadAndRun(b *testing.B, file string, sets []scenarios.Set) *sim.Result {
	l, err := scenarios.Load(file, sets...)
	if err != nil {
		b.Fatal(err)
	}
	built, err := l.Build()
	if err != nil {
		b.Fatal(err)
	}
	defer built.Close()
	res, err := sim.Run(built.Config)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkStartup is the cost of each instance before any request: the
// reference scenario with 1,024 instances and one request, loaded, built
// and run, reported per instance (bytes allocated and wall time).
func BenchmarkStartup(b *testing.B) {
	const n = 1024
	sets := referenceSets(n, 1)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		loadAndRun(b, referenceFile, sets)
	}
	runtime.ReadMemStats(&after)
	perOp := float64(b.N * n)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/perOp, "B/instance")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perOp, "ns/instance")
}
