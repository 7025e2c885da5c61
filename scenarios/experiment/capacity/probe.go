package capacity

import (
	"errors"
	"fmt"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/sim"
)

// Probe is one run of a capacity search: the offered rate and what the
// fleet made of it. Shares are of all requests, so a rejected or dropped
// request counts against every one.
type Probe struct {
	Scale             float64 `json:"-"` // multiple of the scenario's own arrival rate (set by the caller)
	RateRPS           float64 `json:"-"` // offered arrival rate, requests per s (set by the caller)
	Attainment        float64 // share meeting both TTFT and TPOT limits
	TTFTShare         float64 // share that completed within the TTFT limit
	TPOTShare         float64 // share that completed within the TPOT limit
	TTFTP90S          float64 // completed requests, s
	TPOTP90S          float64
	RequestGoodputRPS float64 // request goodput: requests per s of the run that met both limits
	GPUs              int
	Classes           []ClassProbe `json:",omitempty"` // per traffic class, when the workload has them
	unserved          error        // the requests no instance could hold (see unserved); nil if none
}

// ClassProbe is one traffic class's attainment in a run, under its own
// SLO, and the target its SLO sets.
type ClassProbe struct {
	Name       string
	Attainment float64
	Target     float64
}

// MeetsStrict reports whether a run meets the target the way max goodput is
// defined: the share of requests meeting both limits at once. With
// traffic classes, every class's share of its requests meeting both of
// its own limits must reach its own target instead (target is then not
// read): the max goodput subject to every class's SLO.
func (m Probe) MeetsStrict(target float64) bool {
	if len(m.Classes) > 0 {
		for _, c := range m.Classes {
			if c.Attainment < c.Target {
				return false
			}
		}
		return true
	}
	return m.Attainment >= target
}

// MeetsLoose is the variant of DistServe's published simulator: TTFT and
// TPOT each within their limits for a target share of requests (at a 0.9
// target: P90 TTFT and P90 TPOT under the limits), not necessarily the same
// requests.
func (m Probe) MeetsLoose(target float64) bool {
	return m.TTFTShare >= target && m.TPOTShare >= target
}

// baseRate returns the scenario's offered arrival rate, requests per s:
// requests over the span from the first arrival to the last. It reads the
// workload without simulating.
// Cost: one pass over the workload's requests.
func baseRate(l *scenarios.Loaded) (float64, error) {
	b, err := l.Build()
	if err != nil {
		return 0, err
	}
	defer b.Close()
	var r sim.Request
	var n, firstNs, lastNs int64
	for {
		ok, err := b.Config.Source.Next(&r)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if n == 0 {
			firstNs = r.ArrivalNs
		}
		n, lastNs = n+1, r.ArrivalNs
	}
	if n < 2 || lastNs <= firstNs {
		return 0, fmt.Errorf("%s: the workload has %d requests over %d ns: an arrival rate needs at least two "+
			"requests at different times", experiment.WorkloadName(l), n, lastNs-firstNs)
	}
	return float64(n) * 1e9 / float64(lastNs-firstNs), nil
}

// deviceNoun returns what the devices of l's fleet are called ("GPU",
// "wafer", or "device" for several kinds): scenarios.Built.Device.
func deviceNoun(l *scenarios.Loaded) (string, error) {
	b, err := l.Build()
	if err != nil {
		return "", err
	}
	defer b.Close()
	return b.Device, nil
}

// runProbe simulates a loaded scenario with simF and
// measures the run; it returns the run's summary too.
func runProbe(l *scenarios.Loaded, simF experiment.Simulate) (Probe, results.Summary, error) {
	sum, res, err := simF(l)
	if err != nil {
		return Probe{}, sum, err
	}
	m := summaryFigures(&sum)
	m.TTFTShare, m.TPOTShare = experiment.LimitShares(res, results.SLO{TTFTNs: int64(l.SLO.TTFT), TPOTNs: int64(l.SLO.TPOT)})
	m.unserved = experiment.Unserved(res, experiment.WorkloadName(l))
	return m, sum, nil
}

// summaryFigures returns the figures of a probe that its summary holds.
func summaryFigures(sum *results.Summary) Probe {
	m := Probe{Attainment: sum.SLO.Attainment, TTFTP90S: sum.TTFT.P90, TPOTP90S: sum.TPOT.P90,
		RequestGoodputRPS: sum.SLO.RequestGoodputRPS, GPUs: sum.GPUs}
	for _, c := range sum.Classes {
		m.Classes = append(m.Classes, ClassProbe{Name: c.Name, Attainment: c.SLO.Attainment, Target: c.SLO.Target})
	}
	return m
}

// probe returns the saved probe: the figures its summary holds from sum,
// the others from the record.
func (sp *savedProbe) probe(sum *results.Summary) Probe {
	m := summaryFigures(sum)
	m.TTFTShare, m.TPOTShare = sp.TTFTShare, sp.TPOTShare
	if sp.Unserved != "" {
		m.unserved = errors.New(sp.Unserved)
	}
	return m
}
