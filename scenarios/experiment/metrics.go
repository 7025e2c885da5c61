package experiment

import (
	"io"

	"handoff/results/openmetrics"
	"handoff/sim"
)

// metricsBudget bounds the grid points metrics.om holds over all
// instances: about 20 KB of text and 1 KB of memory each (the histograms'
// buckets), so at most about 330 MB of file. A fleet of 4 instances keeps
// the timeline's 0.5 s for 4,096 points (34 minutes of simulated time),
// then halves its resolution as the timeline does.
const metricsBudget = 1 << 14

// AttachMetrics is a configure function for Run: Write also writes
// metrics.om (results/openmetrics), each request's metrics gathered as the
// run ends it — or from the records, when the run keeps them. The run must
// sample its timeline (WithTimeline).
func (d *RunDir) AttachMetrics(cfg *sim.Config) {
	engines := make([]openmetrics.Engine, len(cfg.Instances))
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		engines[i] = openmetrics.Engine{Name: in.Name, Pool: in.Pool, Role: in.Role.String()}
	}
	d.metrics = openmetrics.NewRecorder(engines, timelineIntervalNs, metricsBudget)
	if !keeps(cfg) {
		cfg.Records = chain(cfg.Records, d.metrics)
	}
}

// metricsFile is metrics.om's entry in Write's list, or nil without
// AttachMetrics.
func (d *RunDir) metricsFile(run *Finished) func(io.Writer) error {
	m := d.metrics
	if m == nil {
		return nil
	}
	return func(w io.Writer) error {
		res := run.Result
		for i := range res.Records {
			m.Record(&res.Records[i])
		}
		var buf []openmetrics.Sample
		for i, tl := range res.Timelines {
			buf = buf[:0]
			for _, s := range tl.Samples {
				buf = append(buf, openmetrics.Sample{AtNs: s.AtNs, Running: s.Running, Waiting: s.Waiting,
					KVUsed: s.KVUsed, Preemptions: s.Preemptions})
			}
			m.Gauges(i, tl.IntervalNs, buf)
		}
		return m.Write(w, run.Loaded.Model)
	}
}
