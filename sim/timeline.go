package sim

import (
	"math"

	"handoff/models/engine"
)

// Sample is one point of an instance's timeline: its state at the end of
// the instant AtNs.
type Sample struct {
	AtNs        int64
	KVUsed      float64 // share of KV blocks in use, [0, 1]
	Running     int32   // sequences in the running set
	Waiting     int32   // sequences queued (swapped-out included)
	Preemptions int32   // preemptions since the previous sample
	// TierUsed is the share of each lower KV tier's capacity (host, disk,
	// store) holding cached blocks; 0 where the instance has none.
	TierUsed [engine.NumTiers]float32
	// Lockup is the kind of lock-up the instance was in (NoLock: none),
	// marked once the spell counts (lockup.go).
	Lockup LockKind
}

// Timeline is an instance's state over a run, for plots: a sample at every
// multiple of IntervalNs of simulated time, from 0 to the first at or after
// the run's last event, idle or not. A timeline holds at most Config.TimelineSamples samples:
// when a run outgrows them, every other sample is dropped (its preemptions
// carried into the next) and IntervalNs doubles, so the whole run stays
// covered at a coarser grid.
type Timeline struct {
	Instance   string
	Pool       string
	MaxSeqs    int // the instance's max_num_seqs: its running set's limit
	IntervalNs int64
	Samples    []Sample
}

// timelines samples every instance on a fixed grid of simulated time.
// Between events nothing changes, so the state at a grid point is the
// state after the last event at or before it: the grid is filled up to
// each event's time just before the event is applied.
type timelines struct {
	list   []Timeline // per instance; nil when not sampling
	nextNs int64      // the next grid point; MaxInt64 when not sampling
	pend   []int32    // per instance: preemptions since its last sample
	max    int        // samples per instance
}

func newTimelines(cfg *Config) timelines {
	t := timelines{nextNs: math.MaxInt64}
	if cfg.TimelineIntervalNs <= 0 {
		return t
	}
	n := len(cfg.Instances)
	// At least 3: coarsening 2 samples keeps only the one at 0, so the
	// grid would never reach the run's end (its interval doubling until it
	// overflows).
	t.list, t.pend, t.nextNs, t.max = make([]Timeline, n), make([]int32, n), 0, max(cfg.TimelineSamples, 3)
	for i := range t.list {
		in := &cfg.Instances[i]
		t.list[i] = Timeline{Instance: in.Name, Pool: in.Pool, MaxSeqs: in.Engine.MaxSeqs, IntervalNs: cfg.TimelineIntervalNs}
	}
	return t
}

// sampleBefore samples every instance at the grid points before atNs.
func (c *cluster) sampleBefore(atNs int64) {
	t := &c.tl
	for t.nextNs < atNs {
		for i := range t.list {
			c.syncThrough(i, t.nextNs)
			t.take(i, c.stateOf(i))
		}
		if c.cfg.Tracer != nil {
			c.traceCounters(t.nextNs)
		}
		t.advance()
	}
}

// stateOf is instance i's state for its timeline, less the sample's time
// and preemptions.
func (c *cluster) stateOf(i int) Sample {
	in := c.replicas[i].eng
	pool := in.Pool()
	s := Sample{Running: int32(in.Running()), Waiting: int32(in.Waiting()),
		KVUsed: float64(pool.UsedBlocks()) / float64(pool.NumBlocks())}
	for k := range engine.NumTiers {
		if cached, capacity := in.TierBlocks(k); capacity > 0 {
			s.TierUsed[k] = float32(cached) / float32(capacity)
		}
	}
	return s
}

// take appends instance i's sample at the next grid point: state s, with
// the preemptions since its last sample.
func (t *timelines) take(i int, s Sample) {
	s.AtNs, s.Preemptions = t.nextNs, t.pend[i]
	t.list[i].Samples = append(t.list[i].Samples, s)
	t.pend[i] = 0
}

// advance moves to the next grid point, coarsening the grid when the
// timelines are full.
func (t *timelines) advance() {
	t.nextNs += t.list[0].IntervalNs
	if len(t.list[0].Samples) == t.max {
		t.coarsen()
	}
}

// ended reports whether the timelines reach endNs: their last sample is
// at or after it.
func (t *timelines) ended(endNs int64) bool {
	s := t.list[0].Samples
	return len(s) > 0 && s[len(s)-1].AtNs >= endNs
}

// sampleToEnd extends the timelines to the first grid point at or after
// the run's end, so that the last preemptions are in a sample.
func (c *cluster) sampleToEnd() {
	t := &c.tl
	for t.list != nil && !t.ended(c.nowNs) {
		c.sampleBefore(t.nextNs + 1)
	}
}

// coarsen halves every timeline's resolution: samples at odd multiples of
// the interval go, their preemptions joining the next sample kept.
func (t *timelines) coarsen() {
	for i := range t.list {
		tl := &t.list[i]
		kept := tl.Samples[:0]
		carry := int32(0)
		for _, s := range tl.Samples {
			if (s.AtNs/tl.IntervalNs)%2 == 1 {
				carry += s.Preemptions
				continue
			}
			s.Preemptions += carry
			carry = 0
			kept = append(kept, s)
		}
		t.pend[i] += carry // the last dropped sample's go to the next one taken
		tl.Samples = kept
		tl.IntervalNs *= 2
	}
	// The next grid point is the next multiple of the new interval.
	if iv := t.list[0].IntervalNs; t.nextNs%iv != 0 {
		t.nextNs += iv - t.nextNs%iv
	}
}

// notePreemptions counts instance i's preemptions into its next sample.
func (c *cluster) notePreemptions(i, n int) {
	if c.tl.list != nil {
		c.tl.pend[i] += int32(n)
	}
}

// mark marks instance i's samples from fromNs up to toNs, which a lock-up
// spell of kind k spanned. A spell counts only once it has lasted the
// threshold or ended, after the samples it spans were taken.
// Cost: O(samples marked).
func (t *timelines) mark(i int, fromNs, toNs int64, k LockKind) {
	if t.list == nil {
		return
	}
	s := t.list[i].Samples
	for j := len(s) - 1; j >= 0 && s[j].AtNs >= fromNs; j-- {
		if s[j].AtNs < toNs {
			s[j].Lockup = k
		}
	}
}
