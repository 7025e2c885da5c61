package main

import (
	"io"
	"strconv"

	"handoff/sim"
)

// Timeline sampling for `run -o`: every instance's KV occupancy and batch
// every timelineIntervalNs of simulated time, at most timelineSamples
// samples (and preemption marks) per instance.
const (
	timelineIntervalNs = 500e6
	timelineSamples    = 20000
)

func withTimeline(cfg *sim.Config) {
	cfg.TimelineIntervalNs, cfg.TimelineSamples = timelineIntervalNs, timelineSamples
}

// writeTimelineCSV writes the sampled timelines: one row per sample
// (kind "sample") and per preemption (kind "preemption").
func writeTimelineCSV(w io.Writer, tls []sim.Timeline) error {
	b := []byte("kind,instance,time_s,kv_used,running,waiting\n")
	for _, tl := range tls {
		for _, s := range tl.Samples {
			b = append(b, "sample,"...)
			b = append(b, tl.Instance...)
			b = append(b, ',')
			b = strconv.AppendFloat(b, float64(s.AtNs)/1e9, 'f', 3, 64)
			b = append(b, ',')
			b = strconv.AppendFloat(b, s.KVUsed, 'f', 4, 64)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(s.Running), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(s.Waiting), 10)
			b = append(b, '\n')
		}
		for _, at := range tl.PreemptionsNs {
			b = append(b, "preemption,"...)
			b = append(b, tl.Instance...)
			b = append(b, ',')
			b = strconv.AppendFloat(b, float64(at)/1e9, 'f', 3, 64)
			b = append(b, ",,,\n"...)
		}
	}
	_, err := w.Write(b)
	return err
}
