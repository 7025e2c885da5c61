package sim

// Sample is one point of an instance's timeline.
type Sample struct {
	AtNs    int64
	KVUsed  float64 // share of KV blocks in use, [0, 1]
	Running int     // sequences in the running set
	Waiting int     // sequences queued (swapped-out included)
}

// Timeline is an instance's sampled state over a run, for plots: KV
// occupancy and batch size every Config.TimelineIntervalNs of simulated
// time (taken at the first step boundary past each interval), and the
// times of its preemptions. Bounded by Config.TimelineSamples per instance.
type Timeline struct {
	Instance      string
	Samples       []Sample
	PreemptionsNs []int64
}

// sampleTimeline records instance i's state if its interval has passed.
func (c *cluster) sampleTimeline(i int) {
	if c.cfg.TimelineIntervalNs <= 0 {
		return
	}
	tl := c.replicas[i].timeline
	if len(tl.Samples) >= c.cfg.TimelineSamples ||
		len(tl.Samples) > 0 && c.nowNs-tl.Samples[len(tl.Samples)-1].AtNs < c.cfg.TimelineIntervalNs {
		return
	}
	in := c.replicas[i].eng
	pool := in.Pool()
	tl.Samples = append(tl.Samples, Sample{AtNs: c.nowNs, Running: in.Running(), Waiting: in.Waiting(),
		KVUsed: float64(pool.UsedBlocks()) / float64(pool.NumBlocks())})
}

// notePreemptions adds preemption times to instance i's timeline.
func (c *cluster) notePreemptions(i, n int) {
	if c.cfg.TimelineIntervalNs <= 0 {
		return
	}
	tl := c.replicas[i].timeline
	for range n {
		if len(tl.PreemptionsNs) < c.cfg.TimelineSamples {
			tl.PreemptionsNs = append(tl.PreemptionsNs, c.nowNs)
		}
	}
}
