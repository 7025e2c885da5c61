package plot

import (
	"cmp"
	"io"
	"slices"

	"handoff/results/rundir"
)

// maxTimelinePlots bounds the per-instance timelines drawn from one run:
// the instances with the most preemptions (then in file order), only
// those that preempted.
const maxTimelinePlots = 4

// timelineFigures reads a run directory's timeline.csv and returns one timeline per
// pool (timeline_pool_<pool>: all its instances in one picture), then one
// per instance for the few most worth a look: those that preempted most.
// A file written before the pool column gives one timeline per instance
// (at most maxTimelinePlots).
func timelineFigures(dir string) ([]figure, error) {
	tls, err := readTimelines(dir)
	if err != nil {
		return nil, err
	}
	var figs []figure
	pools := map[string][]InstanceTimeline{}
	var order []string
	for _, tl := range tls {
		if tl.Pool != "" && pools[tl.Pool] == nil {
			order = append(order, tl.Pool)
		}
		if tl.Pool != "" {
			pools[tl.Pool] = append(pools[tl.Pool], tl)
		}
	}
	for _, pool := range order {
		members := pools[pool]
		figs = append(figs, figure{"timeline_pool_" + pool, func(w io.Writer, f Format) error {
			return PoolTimeline(w, f, pool, members)
		}})
	}
	slices.SortStableFunc(tls, func(a, b InstanceTimeline) int {
		return cmp.Compare(len(b.PreemptionS), len(a.PreemptionS))
	})
	for _, tl := range tls[:min(len(tls), maxTimelinePlots)] {
		if len(order) > 0 && len(tl.PreemptionS) == 0 {
			break
		}
		figs = append(figs, figure{"timeline_" + tl.Name, func(w io.Writer, f Format) error { return Timeline(w, f, tl) }})
	}
	return figs, nil
}

// readTimelines reads dir's timeline.csv (rundir.ReadTimeline) as
// per-instance timelines in file order: a sample with preemptions marks
// one at its time, and so does each "preemption" row of older files.
func readTimelines(dir string) ([]InstanceTimeline, error) {
	rows, err := rundir.ReadTimeline(dir)
	if err != nil {
		return nil, err
	}
	tls := make([]InstanceTimeline, len(rows))
	for i, row := range rows {
		tl := InstanceTimeline{Name: row.Instance, Pool: row.Pool, MaxSeqs: row.MaxSeqs,
			Samples: make([]Sample, len(row.Samples))}
		for _, ns := range row.MarksNs {
			tl.PreemptionS = append(tl.PreemptionS, float64(ns)/1e9)
		}
		for k, s := range row.Samples {
			t := float64(s.AtNs) / 1e9
			tl.Samples[k] = Sample{TimeS: t, KVUsed: s.KVUsed, Batch: int(s.Running), Waiting: int(s.Waiting)}
			if s.Preemptions != 0 {
				tl.PreemptionS = append(tl.PreemptionS, t)
			}
		}
		tls[i] = tl
	}
	return tls, nil
}
