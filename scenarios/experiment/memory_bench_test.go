package experiment

import (
	"fmt"
	"runtime"
	"testing"

	"handoff/scenarios"
	"handoff/sim"
)

// BenchmarkRunMemory runs the reference workload (scenarios/perf/
// reference.yaml) on one instance, 100,000, 1,000,000 and (streaming)
// 2,000,000 requests, as
// `handoff run` does — streaming the records (keep=false) or keeping
// them all (keep=true) — and reports the heap the run holds per request:
// live-B/request, the largest live heap (after a collection) sampled
// every 16 Config.ProgressEvents events during the run, and after-B/request,
// the live heap after it with its summary and result still reachable.
// Streaming, the live heap is the window of records in flight and the
// Summarizer's exact values (24 B per completed request up to
// results.ExactValues, then none: 2,000,000 requests peak as 1,000,000
// do); keeping, it grows by a record (≈ 241 B) per request.
//
//	go test ./scenarios/experiment -run XXX -bench RunMemory -benchtime 1x
func BenchmarkRunMemory(b *testing.B) {
	for _, c := range []struct {
		keep bool
		n    int
	}{{false, 100_000}, {false, 1_000_000}, {false, 2_000_000}, {true, 100_000}, {true, 1_000_000}} {
		b.Run(fmt.Sprintf("keep=%v/requests=%d", c.keep, c.n), func(b *testing.B) { benchRunMemory(b, c.n, c.keep) })
	}
}

func benchRunMemory(b *testing.B, n int, keep bool) {
	l, err := scenarios.Load("../perf/reference.yaml",
		scenarios.Set{Path: "workload.synthetic.requests", Value: fmt.Sprint(n)})
	if err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	liveHeap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for b.Loop() {
		base := liveHeap()
		var peak uint64
		calls := 0
		configure := []func(*sim.Config){func(cfg *sim.Config) {
			cfg.Progress = func(_, _, _ int64) {
				if calls++; calls%16 == 0 {
					peak = max(peak, liveHeap())
				}
			}
		}}
		if keep {
			configure = append(configure, KeepRecords)
		}
		sum, res, err := Run(l, nil, configure...)
		if err != nil {
			b.Fatal(err)
		}
		after := liveHeap()
		runtime.KeepAlive(res)
		runtime.KeepAlive(sum)
		if sum.Requests.Total != int64(n) {
			b.Fatalf("%d requests summarised, want %d", sum.Requests.Total, n)
		}
		b.ReportMetric(float64(peak-min(peak, base))/float64(n), "live-B/request")
		b.ReportMetric(float64(after-min(after, base))/float64(n), "after-B/request")
		b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "live-MiB")
	}
}
