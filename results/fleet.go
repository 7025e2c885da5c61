package results

import (
	"bytes"
	"fmt"
)

// FleetInfo is what a run whose fleet changes (autoscaling, crashes) adds
// to RunInfo: each pool's instance counts at every change, what each
// instance was billed for, and the time from each scale-up's request to
// its instance being ready.
type FleetInfo struct {
	Pools      []PoolCounts
	Billed     []BilledInstance // per instance
	ScaleUpsNs []int64
}

// PoolCounts is a pool's instance counts over a run, at each change.
type PoolCounts struct {
	Pool   string
	Points []CountPoint
}

// CountPoint is a pool's instance counts from AtNs on.
type CountPoint struct {
	AtNs                       int64
	Ready, Requested, Draining int
}

// BilledInstance is one instance's bill: the time it was requested, ready
// or draining, the devices it occupies and their cost.
type BilledInstance struct {
	Pool           string
	GPUs           int
	BilledNs       int64
	CostPerGPUHour float64 // USD
	Crashes        int64
	FailedOver     int64 // requests that failed over from it
}

// FleetSummary reports a changing fleet: what it cost, how its pools'
// sizes moved, what its faults did to requests, and how attainment went
// hour by hour.
type FleetSummary struct {
	GPUHours          float64       `json:"gpu_hours"`
	CostUSD           float64       `json:"cost_usd"`
	Pools             []PoolSummary `json:"pools"`
	ScaleUps          int           `json:"scale_ups"`
	ScaleUpS          Stats         `json:"scale_up_s"` // request → ready
	Crashes           int64         `json:"crashes"`
	FailedOver        int64         `json:"failed_over"`      // requests failed over at least once
	FailoverStallS    Stats         `json:"failover_stall_s"` // per failed-over request: crash → its new attempt's first token, summed
	Lost              int64         `json:"lost"`             // failed-over requests that did not complete
	AttainmentPerHour []float64     `json:"slo_attainment_per_hour"`
}

// PoolSummary is one pool's figures in a FleetSummary.
type PoolSummary struct {
	Pool        string  `json:"pool"`
	GPUHours    float64 `json:"gpu_hours"`
	CostUSD     float64 `json:"cost_usd"`
	MinReady    int     `json:"min_ready"`
	MaxReady    int     `json:"max_ready"`
	ChangeCount int     `json:"changes"` // points after the first
}

// SummarizeFleet computes a FleetSummary. A request counts in the hour of
// its arrival (hour k: [k h, (k+1) h)); its attainment is that of
// Summarize, within the hour's requests. Lost counts failed-over requests
// that ended other than completed (failed over too often, or abandoned
// while failing over). O(records + points).
func SummarizeFleet(recs []Record, f *FleetInfo, slo SLO) *FleetSummary {
	s := &FleetSummary{}
	byPool := map[string]int{}
	for _, p := range f.Pools {
		ps := PoolSummary{Pool: p.Pool, MinReady: -1, ChangeCount: max(0, len(p.Points)-1)}
		for _, pt := range p.Points {
			ps.MaxReady = max(ps.MaxReady, pt.Ready)
			if ps.MinReady < 0 || pt.Ready < ps.MinReady {
				ps.MinReady = pt.Ready
			}
		}
		byPool[p.Pool] = len(s.Pools)
		s.Pools = append(s.Pools, ps)
	}
	for _, b := range f.Billed {
		h := float64(b.BilledNs) / 3.6e12 * float64(b.GPUs)
		s.GPUHours += h
		s.CostUSD += h * b.CostPerGPUHour
		s.Crashes += b.Crashes
		if k, ok := byPool[b.Pool]; ok {
			s.Pools[k].GPUHours += h
			s.Pools[k].CostUSD += h * b.CostPerGPUHour
		}
	}
	ups := make([]float64, len(f.ScaleUpsNs))
	for i, ns := range f.ScaleUpsNs {
		ups[i] = float64(ns)
	}
	s.ScaleUps, s.ScaleUpS = len(ups), statsNs(ups)
	var stalls []float64
	var good, all []int64
	for i := range recs {
		r := &recs[i]
		if r.Failovers > 0 {
			s.FailedOver++
			stalls = append(stalls, float64(r.FailoverUs)*1e3)
			if r.Status != Completed {
				s.Lost++
			}
		}
		h := int(r.ArrivalNs / 3.6e12)
		for len(all) <= h {
			all, good = append(all, 0), append(good, 0)
		}
		all[h]++
		if r.Status == Completed && meetsSLO(r, slo) {
			good[h]++
		}
	}
	s.FailoverStallS = statsNs(stalls)
	for h := range all {
		s.AttainmentPerHour = append(s.AttainmentPerHour, ratio(good[h], all[h]))
	}
	return s
}

// writeFleet writes a changing fleet's lines of the summary table; its
// devices are called noun ("GPU-hours", "wafer-hours").
func writeFleet(b *bytes.Buffer, f *FleetSummary, noun string) {
	if f == nil {
		return
	}
	fmt.Fprintf(b, "%-11s %.2f %s-hours   $%.2f", "fleet", f.GPUHours, noun, f.CostUSD)
	for _, p := range f.Pools {
		if p.MinReady != p.MaxReady {
			fmt.Fprintf(b, "   %s %d–%d ready", p.Pool, p.MinReady, p.MaxReady)
		}
	}
	if f.ScaleUps > 0 {
		fmt.Fprintf(b, "   %d scale-ups (p50 %.3g s, max %.3g s)", f.ScaleUps, f.ScaleUpS.P50, f.ScaleUpS.Max)
	}
	b.WriteByte('\n')
	if f.Crashes > 0 || f.FailedOver > 0 {
		fmt.Fprintf(b, "%-11s %d crashes   %d requests failed over (stall p50 %.3g s, max %.3g s)   %d lost\n", "faults",
			f.Crashes, f.FailedOver, f.FailoverStallS.P50, f.FailoverStallS.Max, f.Lost)
	}
}
