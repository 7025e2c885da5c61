package results

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummarizeFleetByHand: two 2-GPU instances billed 1 h and 30 min at
// $3 a GPU-hour are 3 GPU-hours and $9; attainment per hour counts each
// request in the hour it arrived; a failed-over request that failed is
// lost.
func TestSummarizeFleetByHand(t *testing.T) {
	const h = int64(3.6e12)
	recs := []Record{
		{ArrivalNs: 0, FirstTokenNs: 1e8, FinishNs: 2e8, OutputTokens: 2, Status: Completed},
		{ArrivalNs: 10, FirstTokenNs: 9e9, FinishNs: 1e10, OutputTokens: 2, Status: Completed}, // TTFT over 1 s
		{ArrivalNs: h + 5, FirstTokenNs: h + 1e8, FinishNs: h + 2e8, OutputTokens: 2, Status: Completed,
			Failovers: 1, FailoverUs: 2e6},
		{ArrivalNs: h + 9, Status: Failed, Reason: "failed: its instances crashed 8 times", Failovers: 8, FailoverUs: 4e6},
	}
	f := &FleetInfo{Pools: []PoolCounts{{Pool: "d", Points: []CountPoint{{Ready: 1}, {AtNs: 5, Ready: 2}}}},
		Billed: []BilledInstance{{Pool: "d", GPUs: 2, BilledNs: h, CostPerGPUHour: 3, Crashes: 1},
			{Pool: "d", GPUs: 2, BilledNs: h / 2, CostPerGPUHour: 3}},
		ScaleUpsNs: []int64{2e9, 4e9}}
	s := SummarizeFleet(recs, f, SLO{TTFTNs: 1e9})
	if s.GPUHours != 3 || s.CostUSD != 9 || s.Pools[0].MinReady != 1 || s.Pools[0].MaxReady != 2 {
		t.Errorf("cost %+v", s)
	}
	if len(s.AttainmentPerHour) != 2 || s.AttainmentPerHour[0] != 0.5 || s.AttainmentPerHour[1] != 0.5 {
		t.Errorf("attainment per hour %v, want [0.5 0.5]", s.AttainmentPerHour)
	}
	if s.FailedOver != 2 || s.Lost != 1 || s.FailoverStallS.Max != 4 || s.ScaleUpS.Max != 4 || s.ScaleUps != 2 {
		t.Errorf("faults %+v", s)
	}
	var b bytes.Buffer
	writeFleet(&b, s, "GPU")
	if !strings.Contains(b.String(), "3.00 GPU-hours   $9.00") || !strings.Contains(b.String(), "1 lost") {
		t.Errorf("table:\n%s", b.String())
	}
}
