package experiment

import (
	"io"
	"iter"

	"handoff/results"
	"handoff/results/rundir"
	"handoff/sim"
)

// Timeline sampling for `run -o`: every instance's KV occupancy, batch,
// queue and preemptions every timelineIntervalNs of simulated time; runs
// longer than timelineSamples intervals are sampled at a coarser multiple
// (sim.Timeline), and fleets so large that timelineBudget samples would not
// give every instance timelineSamples get fewer each.
const (
	timelineIntervalNs = 500e6
	timelineSamples    = 20000
	timelineBudget     = 1 << 22 // samples over all instances: ~200 MB of 48-byte samples
)

// WithTimeline makes a run sample its timelines (a configure function for
// Run): every 0.5 s of simulated time, at most 20,000 samples per instance
// and about 4 million over the fleet.
func WithTimeline(cfg *sim.Config) {
	cfg.TimelineIntervalNs = timelineIntervalNs
	cfg.TimelineSamples = min(timelineSamples, timelineBudget/max(len(cfg.Instances), 1))
}

// WriteTimelineCSV writes the sampled timelines as timeline.csv
// (rundir.WriteTimeline), converting one instance's samples at a time.
func WriteTimelineCSV(w io.Writer, tls []sim.Timeline, tiers bool) error {
	return rundir.WriteTimeline(w, timelineRows(tls), tiers)
}

// timelineRows yields each sim.Timeline as a rundir.Timeline, its samples
// in one buffer reused from instance to instance.
func timelineRows(tls []sim.Timeline) iter.Seq[rundir.Timeline] {
	return func(yield func(rundir.Timeline) bool) {
		var buf []rundir.Sample
		for _, tl := range tls {
			buf = buf[:0]
			for _, s := range tl.Samples {
				buf = append(buf, rundir.Sample{AtNs: s.AtNs, KVUsed: s.KVUsed, Running: s.Running, Waiting: s.Waiting,
					Preemptions: s.Preemptions, TierUsed: s.TierUsed, Lockup: s.Lockup.String()})
			}
			if !yield(rundir.Timeline{Instance: tl.Instance, Pool: tl.Pool, MaxSeqs: tl.MaxSeqs, Samples: buf}) {
				return
			}
		}
	}
}

// WriteLinksCSV writes the run's network links as links.csv
// (rundir.WriteLinks).
func WriteLinksCSV(w io.Writer, links []sim.LinkResult, simNs int64) error {
	rows := make([]rundir.Link, len(links))
	for i, l := range links {
		rows[i] = rundir.Link{Name: l.Name, Bytes: l.Stats.Bytes, Transfers: l.Stats.Transfers, BusyNs: l.Stats.BusyNs}
	}
	return rundir.WriteLinks(w, rows, simNs)
}

// WriteFleetCSV writes each pool's instance counts at every change as
// fleet.csv (rundir.WriteFleet).
func WriteFleetCSV(w io.Writer, fleet []sim.PoolFleet) error {
	pools := make([]results.PoolCounts, len(fleet))
	for k, p := range fleet {
		pools[k].Pool = p.Pool
		for _, pt := range p.Points {
			pools[k].Points = append(pools[k].Points, results.CountPoint{AtNs: pt.AtNs, Ready: pt.Ready,
				Requested: pt.Requested, Draining: pt.Draining})
		}
	}
	return rundir.WriteFleet(w, pools)
}
