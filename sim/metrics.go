package sim

import (
	"handoff/models/engine"
	"handoff/models/perf"
)

// instanceMetrics are the per-instance figures the core derives from the
// engine's events: cascades, lock-ups (lockup.go) and the share of busy
// time spent on prefill work.
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
	lock         lockState
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
		if f := c.flights.at(s.Ref); c.traced(f.req.ID) {
			c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), "preempted", c.nowNs)
			if f.preemptedNs < 0 {
				f.preemptedNs = c.nowNs
			}
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
// instance preempted or still had victims to recover, is a lock-up, a
// preemption loop: it works, but on recovering what preemption destroyed.
// (A long prefill with no preemption is just a long prefill.) The spell
// counts from its last progress, or from the end of a stuck spell counted
// since (lockup.go), whichever is later.
func (c *cluster) progress(i, tokens int) { c.progressAt(i, tokens, c.nowNs) }

// progressAt is progress for a step that ended at atNs.
func (c *cluster) progressAt(i, tokens int, atNs int64) {
	m := &c.replicas[i].metrics
	if tokens == 0 {
		return
	}
	if m.progressNs >= 0 && (m.preemptedNow || m.pending > 0) {
		if from := max(m.progressNs, m.lock.floorNs); atNs-from > c.cfg.LockupThresholdNs {
			c.countSpell(i, lockSpell{kind: LockPreemptionLoop, fromNs: from, toNs: atNs, waitsFor: -1})
		}
	}
	m.preemptedNow = false
	m.progressNs = atNs
}

// busyWith starts the clock of a busy spell and attributes the step's
// duration between prefill and decode work in proportion to what each part
// would cost alone.
func (c *cluster) busyWith(i int, b *perf.Batch, durNs int64) {
	m := &c.replicas[i].metrics
	if m.progressNs < 0 {
		m.progressNs = c.nowNs
		c.watch(i)
	}
	switch {
	case b.PrefillSeqs == 0:
	case b.DecodeSeqs == 0:
		m.prefillNs += float64(durNs)
	default:
		c.parts.split(b)
		timer := c.replicas[i].cfg.Timer
		p, d := float64(timer.StepNs(&c.parts.prefill)), float64(timer.StepNs(&c.parts.decode))
		m.prefillNs += float64(durNs) * p / (p + d)
	}
}
