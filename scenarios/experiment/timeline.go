package experiment

import (
	"io"
	"strconv"

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
	timelineBudget     = 1 << 22 // samples over all instances: ~128 MB
)

// WithTimeline makes a run sample its timelines (a configure function for
// Run): every 0.5 s of simulated time, at most 20,000 samples per instance
// and about 4 million over the fleet.
func WithTimeline(cfg *sim.Config) {
	cfg.TimelineIntervalNs = timelineIntervalNs
	cfg.TimelineSamples = min(timelineSamples, timelineBudget/max(len(cfg.Instances), 1))
}

// WriteTimelineCSV writes the sampled timelines, one row per sample; each
// row's preemptions happened since the instance's previous row, and it
// names the instance's max_num_seqs and pool (for the pool views). With
// tiers, each row ends with the share of the instance's host, disk and
// store tiers holding blocks.
func WriteTimelineCSV(w io.Writer, tls []sim.Timeline, tiers bool) error {
	b := []byte("kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool")
	if tiers {
		b = append(b, ",host_used,disk_used,store_used"...)
	}
	b = append(b, '\n')
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
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(s.Preemptions), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(tl.MaxSeqs), 10)
			b = append(b, ',')
			b = append(b, tl.Pool...)
			for k := 0; tiers && k < len(s.TierUsed); k++ {
				b = append(b, ',')
				b = strconv.AppendFloat(b, float64(s.TierUsed[k]), 'f', 4, 32)
			}
			b = append(b, '\n')
		}
	}
	_, err := w.Write(b)
	return err
}

// WriteLinksCSV writes one row per network link — the KV transfer links
// and the lower tiers' read links — with the bytes it carried, its
// transfers, its busy time and its share of the run busy.
func WriteLinksCSV(w io.Writer, links []sim.LinkResult, simNs int64) error {
	b := []byte("link,bytes,transfers,busy_s,busy_share\n")
	for _, l := range links {
		b = append(b, l.Name...)
		b = append(b, ',')
		b = strconv.AppendFloat(b, l.Stats.Bytes, 'f', 0, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, l.Stats.Transfers, 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(l.Stats.BusyNs)/1e9, 'f', 6, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(l.Stats.BusyNs)/float64(max(simNs, 1)), 'f', 4, 64)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}
