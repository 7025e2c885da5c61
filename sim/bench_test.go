package sim_test

import (
	"runtime"
	"testing"

	"handoff/scenarios"
	"handoff/sim"
)

// benchRun runs a shipped scenario (with sets) once per iteration and
// reports simulated requests per wall-second and the heap still held per
// finished request (the records) after the run.
func benchRun(b *testing.B, file string, sets ...scenarios.Set) {
	b.ReportAllocs()
	var res *sim.Result
	for b.Loop() {
		l, err := scenarios.Load(file, sets...)
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

// retainedPerRequest is the heap freed by dropping *res, per request: what a
// finished run keeps alive.
func retainedPerRequest(res **sim.Result, n float64) float64 {
	var held, freed runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	*res = nil
	runtime.GC()
	runtime.ReadMemStats(&freed)
	return float64(held.HeapAlloc-min(held.HeapAlloc, freed.HeapAlloc)) / n
}

// The performance figures of docs/PERFORMANCE.md.
func BenchmarkRun100kOneInstance(b *testing.B) {
	benchRun(b, "../scenarios/perf/one-instance.yaml")
}

func BenchmarkRun100kSixtyFourInstances(b *testing.B) {
	benchRun(b, "../scenarios/perf/sixty-four-instances.yaml")
}

// The same with speculative decoding that never accepts a draft (ngram,
// one draft token, acceptance 0): as many tokens per step as without, but
// every step planned eagerly, as a speculative instance does not cruise
// (models/engine/spec.go). Set beside the two above, what leaving cruise
// costs (docs/SPECULATIVE.md).
func BenchmarkRun100kOneInstanceSpeculative(b *testing.B) {
	benchRun(b, "../scenarios/perf/one-instance.yaml", neverAccepts("vllm"))
}

func BenchmarkRun100kSixtyFourInstancesSpeculative(b *testing.B) {
	benchRun(b, "../scenarios/perf/sixty-four-instances.yaml", neverAccepts("decode"))
}

func neverAccepts(pool string) scenarios.Set {
	return scenarios.Set{Path: "pools." + pool + ".speculative", Value: "{method: ngram, num_tokens: 1, acceptance: [0]}"}
}
