package sim_test

import (
	"fmt"
	"testing"

	"handoff/scenarios"
	"handoff/scenarios/experiment"
)

// BenchmarkCores runs the reference workload (1,000,000 requests on 1 to
// 16,384 instances) and the day on a thousand GPUs, whole, as `handoff run
// --cores N` runs them (experiment.RunOn) on one core and on two, and
// reports simulated requests per wall-second: the reference fleets split
// into shards on two cores (colocated, round_robin), one instance and the
// day run as one event loop with stages beside it (docs/PARALLEL.md).
func BenchmarkCores(b *testing.B) {
	for _, n := range []int{1, 64, 256, 1024, 16384} {
		for _, cores := range []int{1, 2} {
			b.Run(fmt.Sprintf("instances=%d/cores=%d", n, cores), func(b *testing.B) {
				benchCores(b, referenceFile, referenceSets(n, 1_000_000), cores)
			})
		}
	}
	for _, cores := range []int{1, 2} {
		b.Run(fmt.Sprintf("day/cores=%d", cores), func(b *testing.B) {
			benchCores(b, "../scenarios/perf/day-thousand-gpus.yaml", nil, cores)
		})
	}
}

// benchCores loads file with sets and runs it on cores cores, its records
// streamed to the summary's tally as `handoff run` streams them.
func benchCores(b *testing.B, file string, sets []scenarios.Set, cores int) {
	var requests int64
	for b.Loop() {
		l, err := scenarios.Load(file, sets...)
		if err != nil {
			b.Fatal(err)
		}
		_, res, err := experiment.RunOn(l, nil, cores)
		if err != nil {
			b.Fatal(err)
		}
		requests += res.Requests
	}
	b.ReportMetric(float64(requests)/b.Elapsed().Seconds(), "requests/s")
}
