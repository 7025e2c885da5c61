package sim_test

import (
	"fmt"
	"testing"

	"handoff/scenarios"
	"handoff/sim"
)

// benchScenario is a synthetic load of n requests on one colocated H100
// instance, or on a 64-instance P/D cluster (24 prefill, 40 decode) whose
// arrival rate keeps it busy but stable.
func benchScenario(n, instances int) string {
	pools := "  - {name: vllm, role: colocated, count: 1, hardware: h100-sxm}\n"
	rate := 20
	if instances == 64 {
		pools = "  - {name: prefill, role: prefill, count: 24, hardware: h100-sxm}\n" +
			"  - {name: decode, role: decode, count: 40, hardware: h100-sxm}\n"
		rate = 700
	}
	return fmt.Sprintf(`name: bench-%d
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 50ms}
workload:
  synthetic:
    requests: %d
    arrival: {process: poisson, rate: %d/s}
    input_tokens: {dist: lognormal, mean: 1024, stddev: 512}
    output_tokens: {dist: uniform, min: 64, max: 512}
pools:
%srouter: {policy: least_loaded}
`, instances, n, rate, pools)
}

func benchRun(b *testing.B, n, instances int) {
	b.ReportAllocs()
	for b.Loop() {
		l, err := scenarios.Parse([]byte(benchScenario(n, instances)), "bench.yaml")
		if err != nil {
			b.Fatal(err)
		}
		built, err := l.Build()
		if err != nil {
			b.Fatal(err)
		}
		res, err := sim.Run(built.Config)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(res.Records)), "requests/op")
	}
}

// BenchmarkRun100kOneInstance and BenchmarkRun100kSixtyFourInstances are the
// README's performance figures: divide requests/op by sec/op for simulated
// requests per wall-second.
func BenchmarkRun100kOneInstance(b *testing.B)        { benchRun(b, 100_000, 1) }
func BenchmarkRun100kSixtyFourInstances(b *testing.B) { benchRun(b, 100_000, 64) }
