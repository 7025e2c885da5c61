package sim_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
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
// 1, 64, 256, 1,024 and 16,384 instances, whole (load, build, run, summary), and reports
// simulated requests per wall-second, events per request, the wall time
// per event, the share of engine steps planned steady and what runs did
// (see benchScenario).
func BenchmarkReference(b *testing.B) {
	for _, n := range []int{1, 64, 256, 1024, 16384} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			benchReference(b, referenceSets(n, 1_000_000))
		})
	}
}

func benchReference(b *testing.B, sets []scenarios.Set) { benchScenario(b, referenceFile, sets) }

// benchScenario runs file with sets, whole (load, build, run and
// summary, the records streamed as `handoff run` streams them), and
// reports requests per wall-second, events per request, the wall time per
// event, the share of engine steps planned steady, and of runs
// (steprun.go) the share of the steps priced ahead that a cut dropped and
// the share of popped events that were moot step events.
func benchScenario(b *testing.B, file string, sets []scenarios.Set) {
	b.ReportAllocs()
	var requests, events, steps, steady int64
	var runs sim.RunStats
	for b.Loop() {
		l, err := scenarios.Load(file, sets...)
		if err != nil {
			b.Fatal(err)
		}
		_, res, err := experiment.Run(l, nil)
		if err != nil {
			b.Fatal(err)
		}
		requests += res.Requests
		events += res.Events
		runs.Priced, runs.Dropped, runs.Moot = runs.Priced+res.Runs.Priced, runs.Dropped+res.Runs.Dropped, runs.Moot+res.Runs.Moot
		for _, in := range res.Instances {
			steps, steady = steps+in.Stats.Steps, steady+in.Stats.SteadySteps
		}
	}
	b.ReportMetric(float64(requests)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(steady)/float64(max(steps, 1)), "steady-steps/step")
	b.ReportMetric(float64(events)/float64(requests), "events/request")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(runs.Dropped)/float64(max(runs.Priced, 1)), "dropped/priced")
	b.ReportMetric(float64(runs.Moot)/float64(events+runs.Moot), "moot/popped")
}

// loadAndRun loads file with sets, builds it and runs it.
func loadAndRun(b testing.TB, file string, sets []scenarios.Set) *sim.Result {
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
// reference scenario with 1,024 and 16,384 instances (the most a scenario
// may have) and one request, loaded, built and run, reported per instance
// (bytes allocated and wall time).
func BenchmarkStartup(b *testing.B) {
	for _, n := range []int{1024, 16384} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) { benchStartup(b, n) })
	}
}

func benchStartup(b *testing.B, n int) {
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

// TestLargestFleet loads, builds and runs the reference scenario at the
// most instances a scenario may have, colocated and disaggregated over a
// NIC topology, for a few thousand requests: start-up must stay linear in
// the instances (no table of every pair) and each request must end.
func TestLargestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("16,384 instances")
	}
	const n = 16384
	disaggregated := []scenarios.Set{
		{Path: "pools", Value: `[{name: prefill, role: prefill, count: 8192, hardware: h100-sxm, tp: 1},
			{name: decode, role: decode, count: 8192, hardware: h100-sxm, tp: 1}]`},
		{Path: "link", Value: "{kind: ib-ndr}"},
		{Path: "workload.synthetic.arrival.rate", Value: fmt.Sprintf("%d/s", 8*n)},
		{Path: "workload.synthetic.requests", Value: "4000"},
	}
	for _, sets := range [][]scenarios.Set{referenceSets(n, 4000), disaggregated} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := loadAndRun(t, referenceFile, sets)
		runtime.ReadMemStats(&after)
		if len(res.Records) != 4000 || len(res.Instances) != n {
			t.Fatalf("%d records on %d instances, want 4000 on %d", len(res.Records), len(res.Instances), n)
		}
		for i := range res.Records {
			if r := &res.Records[i]; r.Status != results.Completed {
				t.Fatalf("request %d ended %v", r.ID, r.Status)
			}
		}
		if perInstance := (after.TotalAlloc - before.TotalAlloc) / n; perInstance > 200_000 {
			t.Errorf("%d B allocated per instance, want at most 200 kB", perInstance)
		}
	}
}

// BenchmarkDay runs scenarios/perf/day-thousand-gpus.yaml (a day of the
// eight ServeGen DeepSeek-R1 clients, forty copies each, on 40 prefill and
// 85 decode H200 TP 8 instances: about 5.1 million requests), whole, and
// reports simulated requests per wall-second, events per request and the
// wall time per event. It takes minutes: select it by name.
func BenchmarkDay(b *testing.B) {
	benchScenario(b, "../scenarios/perf/day-thousand-gpus.yaml", nil)
}

// weekFile is a week of the eight ServeGen DeepSeek-R1 clients, 400 copies
// each (about 355 million requests), on a P/D fleet of up to 10,000 H200
// GPUs under autoscaling.
const weekFile = "../scenarios/perf/week-ten-thousand-gpus.yaml"

// BenchmarkWeek runs scenarios/perf/week-ten-thousand-gpus.yaml whole and
// reports what benchScenario does. It takes hours on one core: select it
// by name. BenchmarkWeekDay runs its first day.
func BenchmarkWeek(b *testing.B) { benchScenario(b, weekFile, nil) }

// BenchmarkWeekDay runs the first day of the week (its first 144 windows
// of 600 s: about 50.7 million requests): the week is seven such days,
// each drawn afresh.
func BenchmarkWeekDay(b *testing.B) {
	windows := make([]string, 0, 144)
	for s := 0; s < 86400; s += 600 {
		windows = append(windows, fmt.Sprint(s))
	}
	day := scenarios.Set{Path: "workload.servegen.windows", Value: "[" + strings.Join(windows, ", ") + "]"}
	benchScenario(b, weekFile, []scenarios.Set{day})
}

// BenchmarkWideFleet runs the reference workload on 16,384 instances (the
// most a scenario may have) under each router that reads the instances'
// state, whole, with 3,000 and 20,000 requests: what a routing decision
// costs in the fleet's size shows here. Select it by name.
func BenchmarkWideFleet(b *testing.B) {
	const n = 16384
	for _, policy := range []string{"round_robin", "least_loaded", "dynamo", "llmd"} {
		for _, requests := range []int{3000, 20000} {
			b.Run(fmt.Sprintf("policy=%s/requests=%d", policy, requests), func(b *testing.B) {
				sets := append(referenceSets(n, requests), scenarios.Set{Path: "router.policy", Value: policy})
				benchScenario(b, referenceFile, sets)
			})
		}
	}
}
