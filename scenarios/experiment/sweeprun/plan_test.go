package sweeprun

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"handoff/scenarios/sweep"
)

// BenchmarkPlanSweep measures the checks before a sweep starts: every
// point's scenario is loaded once (1,000 points per op).
func BenchmarkPlanSweep(b *testing.B) {
	vals := make([]string, 100)
	for i := range vals {
		vals[i] = strconv.Itoa(i + 1)
	}
	vary := []string{"pools.decode.count=" + strings.Join(vals, ","), "workload.rate_scale=1,2,3,4,5,6,7,8,9,10"}
	for b.Loop() {
		pl, err := newPlan("../../quickstart.yaml", nil, vary, sweep.Shard{})
		if err != nil {
			b.Fatal(err)
		}
		if err := pl.checkPoints(context.Background(), pl.points, runtime.NumCPU()); err != nil {
			b.Fatal(err)
		}
	}
}
