package sim

import "handoff/models/engine"

// instanceMetrics are the per-instance figures the core derives from the
// engine's events: cascades, lock-ups and the share of busy time spent on
// prefill work.
type instanceMetrics struct {
	pending      int   // preemption victims not yet recovered (the engine's count at the last look)
	open         bool  // a preemption chain is open: it began with a preemption and victims remain
	depth        int   // preemptions in the open chain
	chainStartNs int64 // when the open chain began
	cascades     int   // chains of two or more preemptions
	longest      int   // deepest chain
	cascadeNs    int64 // time spent in cascades
	progressNs   int64 // last token produced, or when work began; -1 while idle
	preemptedNow bool  // a preemption happened since the last progress
	lockups      int   // busy spells with no token for longer than the threshold
	lockupNs     int64
	prefillNs    float64 // busy time attributed to prefill work
}

// preempted opens or extends a preemption chain on instance i with the
// victims of a scheduling pass. A chain is a run of preemptions each made
// while an earlier victim still waits for, or is running, its recovery
// (re-prefill or swap-in).
func (c *cluster) preempted(i int, victims []*engine.Seq) {
	if len(victims) == 0 {
		return
	}
	for _, s := range victims {
		if id := c.flights[s.Ref].req.ID; c.traced(id) {
			c.cfg.Tracer.Instant(id, instanceTrack(i), "preempted", c.nowNs)
		}
	}
	c.replicas[i].metrics.preempt(len(victims), c.nowNs)
}

// noteVictims reads instance i's count of victims after a pass or a step
// (recoveries and rejections lower it).
func (c *cluster) noteVictims(i int) {
	rp := &c.replicas[i]
	rp.metrics.victims(rp.eng.Victims(), c.nowNs)
}

// preempt opens or extends the chain with n preemptions at nowNs.
func (m *instanceMetrics) preempt(n int, nowNs int64) {
	m.preemptedNow = true
	if !m.open {
		m.open, m.depth, m.chainStartNs = true, 0, nowNs
	}
	m.depth += n
}

// victims notes that v victims are left at nowNs, closing the open chain
// when none is.
func (m *instanceMetrics) victims(v int, nowNs int64) {
	if m.pending = v; !m.open || v > 0 {
		return
	}
	m.open = false
	if m.depth >= 2 {
		m.cascades++
		m.longest = max(m.longest, m.depth)
		m.cascadeNs += nowNs - m.chainStartNs
	}
}

// progress notes that a step on instance i produced tokens for sequences
// in normal decode (a token that merely ends a re-prefill does not count); a
// busy spell without any, longer than the lock-up threshold, in which the
// instance preempted or still had victims to recover, is a lock-up: it
// works, but on recovering what preemption destroyed. (A long prefill with
// no preemption is just a long prefill.)
func (c *cluster) progress(i, tokens int) {
	m := &c.replicas[i].metrics
	if tokens == 0 {
		return
	}
	stalled := m.preemptedNow || m.pending > 0
	m.preemptedNow = false
	if gap := c.nowNs - m.progressNs; m.progressNs >= 0 && gap > c.cfg.LockupThresholdNs && stalled {
		m.lockups++
		m.lockupNs += gap
	}
	m.progressNs = c.nowNs
}

// busyWith starts the clock of a busy spell and attributes the step's
// duration between prefill and decode work in proportion to what each part
// would cost alone.
func (c *cluster) busyWith(i int, b *batchParts, durNs int64) {
	m := &c.replicas[i].metrics
	if m.progressNs < 0 {
		m.progressNs = c.nowNs
	}
	switch {
	case b.prefill.PrefillSeqs == 0:
	case b.decode.DecodeSeqs == 0:
		m.prefillNs += float64(durNs)
	default:
		timer := c.replicas[i].cfg.Timer
		p, d := float64(timer.StepNs(&b.prefill)), float64(timer.StepNs(&b.decode))
		m.prefillNs += float64(durNs) * p / (p + d)
	}
}
