package sim

import (
	"fmt"
	"strconv"

	"handoff/models/engine"
	"handoff/models/perf"
)

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
		if f := &c.flights[s.Ref]; c.traced(f.req.ID) {
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
// instance preempted or still had victims to recover, is a lock-up: it
// works, but on recovering what preemption destroyed. (A long prefill with
// no preemption is just a long prefill.)
func (c *cluster) progress(i, tokens int) { c.progressAt(i, tokens, c.nowNs) }

// progressAt is progress for a step that ended at atNs.
func (c *cluster) progressAt(i, tokens int, atNs int64) {
	m := &c.replicas[i].metrics
	if tokens == 0 {
		return
	}
	stalled := m.preemptedNow || m.pending > 0
	m.preemptedNow = false
	if gap := atNs - m.progressNs; m.progressNs >= 0 && gap > c.cfg.LockupThresholdNs && stalled {
		m.lockups++
		m.lockupNs += gap
	}
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

// noteStuck notes that instance i has queued work it cannot start: a
// spell that may be a deadlock, watched like a busy one.
func (c *cluster) noteStuck(i int) {
	if m := &c.replicas[i].metrics; m.progressNs < 0 {
		m.progressNs = c.nowNs
		c.watch(i)
	}
}

// watch starts instance i's lock-up watchdog for the spell that began at
// its progressNs, unless one is queued: LockupAbortNs after the spell's
// last progress, a locked instance aborts its requests (onWatchdog).
func (c *cluster) watch(i int) {
	rp := &c.replicas[i]
	if c.cfg.LockupAbortNs <= 0 || rp.watching {
		return
	}
	rp.watching = true
	c.q.push(rp.metrics.progressNs+c.cfg.LockupAbortNs, classWatchdog, int32(i))
}

// watchSuperseded reports whether instance i's watchdog, due at atNs, is
// moot: the instance went idle, or made progress since (then the watch
// moves to LockupAbortNs after that progress).
func (c *cluster) watchSuperseded(i int, atNs int64) bool {
	rp := &c.replicas[i]
	switch p := rp.metrics.progressNs; {
	case p < 0:
		rp.watching = false
	case p+c.cfg.LockupAbortNs > atNs:
		c.q.push(p+c.cfg.LockupAbortNs, classWatchdog, int32(i))
	default:
		return false
	}
	return true
}

// onWatchdog handles instance i after LockupAbortNs without progress. It
// is locked up if it is stuck — queued work and no step it can start — or
// stalled on recovering what preemption destroyed (victims pending, or a
// preemption since its last progress); then its requests are aborted, at
// the end of the step in flight if there is one. A long prefill, or KV it
// holds for decoders to pull, is not a lock-up: the watch goes on.
func (c *cluster) onWatchdog(i int) {
	rp := &c.replicas[i]
	in, m := c.touch(i), &rp.metrics
	stuck := !in.Busy() && in.Running() == 0 && in.Waiting() > 0 && !c.holdsForPulls(i)
	if !stuck && m.pending == 0 && !m.preemptedNow {
		c.q.push(c.nowNs+c.cfg.LockupAbortNs, classWatchdog, int32(i))
		return
	}
	rp.watching = false
	if in.Busy() {
		rp.abortAfterStep = true
		return
	}
	c.abortLocked(i)
}

// abortLocked ends, as failed, the requests of locked-up instance i that
// can be aborted now, and counts the lock-up from its last progress.
// Requests whose KV is on the wire to it, or with a sequence in another
// instance's step, are left for the next watch.
func (c *cluster) abortLocked(i int) {
	rp := &c.replicas[i]
	rp.abortAfterStep = false
	m := &rp.metrics
	m.lockups++
	m.lockupNs += c.nowNs - m.progressNs
	m.progressNs, m.preemptedNow = c.nowNs, false
	reason := fmt.Sprintf("failed: %s locked up: no progress for %s", rp.cfg.Name, seconds(c.cfg.LockupAbortNs))
	c.completing = i // no plan on i until every abort is done
	for ref := range c.flights {
		if f := &c.flights[ref]; f.on(i) && c.abortable(f) {
			c.fail(int32(ref), reason)
		}
	}
	c.completing = -1
	c.watch(i)
	c.kickSoon(i)
}

// abortable reports whether a flight can be aborted now: its KV is not on
// the wire, and no instance holding one of its sequences is inside a step.
func (c *cluster) abortable(f *flight) bool {
	if f.phase.inTransit() || f.failoverWaiting() {
		return false
	}
	if f.pseq != nil && c.engine(f.route.Prefill).Busy() {
		return false
	}
	return f.dseq == nil || !c.engine(decodingInstance(f)).Busy()
}

// seconds renders a duration for a reason text.
func seconds(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'g', -1, 64) + " s" }
