package plot

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
)

// maxTimelinePlots bounds the per-instance timelines drawn from one run:
// the instances with the most preemptions (then in file order), only
// those that preempted.
const maxTimelinePlots = 4

// timelineFigures reads a run's timeline.csv and returns one timeline per
// pool (timeline_pool_<pool>: all its instances in one picture), then one
// per instance for the few most worth a look: those that preempted most.
// A file written before the pool column gives one timeline per instance
// (at most maxTimelinePlots).
func timelineFigures(path string) ([]figure, error) {
	tls, err := readTimelines(path)
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

// readTimelines parses timeline.csv (kind,instance,time_s,kv_used,running,
// waiting[,preemptions]) into per-instance timelines in file order. A
// sample row with preemptions marks one at its time; files written before
// that column have "preemption" rows instead.
func readTimelines(path string) ([]InstanceTimeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	if _, err := r.Read(); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	var tls []InstanceTimeline
	index := map[string]int{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return tls, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) < 6 {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: %d fields, want at least 6", path, line, len(rec))
		}
		k, ok := index[rec[1]]
		if !ok {
			k, index[rec[1]] = len(tls), len(tls)
			tls = append(tls, InstanceTimeline{Name: rec[1]})
		}
		if err := addTimelineRow(&tls[k], rec); err != nil {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

func addTimelineRow(tl *InstanceTimeline, rec []string) error {
	t, err := strconv.ParseFloat(rec[2], 64)
	if err != nil {
		return fmt.Errorf("time_s: %w", err)
	}
	if rec[0] == "preemption" {
		tl.PreemptionS = append(tl.PreemptionS, t)
		return nil
	}
	kv, err1 := strconv.ParseFloat(rec[3], 64)
	running, err2 := strconv.Atoi(rec[4])
	waiting, err3 := strconv.Atoi(rec[5])
	if err := cmp.Or(err1, err2, err3); err != nil {
		return fmt.Errorf("kv_used/running/waiting: %w", err)
	}
	tl.Samples = append(tl.Samples, Sample{TimeS: t, KVUsed: kv, Batch: running, Waiting: waiting})
	if len(rec) > 6 && rec[6] != "0" {
		tl.PreemptionS = append(tl.PreemptionS, t)
	}
	if len(rec) > 8 { // max_num_seqs, pool
		if tl.MaxSeqs, err = strconv.Atoi(rec[7]); err != nil {
			return fmt.Errorf("max_num_seqs: %w", err)
		}
		tl.Pool = rec[8]
	}
	return nil
}
