package sim

import (
	"fmt"
	"strconv"

	"handoff/models/engine"
	"handoff/results"
)

// Lock-ups. An instance is locked up when it makes no progress and its
// own scheduling cannot change that. Each kind has its rule:
//
//   - deadlock: a scheduling pass starts no step on an instance with queued
//     work and nothing running, and nothing is on its way that would let it
//     (no KV or lower-tier copy in flight to it, no recompile pause), and it
//     holds no KV for decoders to pull;
//   - pinned: the same, on a prefiller that holds KV its decoders have not
//     pulled: its pool is full of finished prompts waiting for decoders that
//     cannot take them. (KV already on the wire, or handed off through the
//     store, frees itself: while only such KV is held the instance is not
//     locked.) It waits for the decoder that holds the most of that KV;
//   - preemption loop: a busy spell without a normal decode token, in which
//     the instance preempted or still had victims to recover (metrics.go).
//
// A stuck spell (deadlock or pinned) begins at the pass that finds the
// instance so and ends at the first pass that does not — a step starts,
// the queue empties, or KV comes on its way — or at its abort or crash; a
// change of kind ends one spell and begins another. Either kind of spell,
// and a preemption loop, counts as a lock-up when it lasts longer than
// Config.LockupThresholdNs; a preemption loop counts from its last
// progress or the end of the last stuck spell counted, so that no time
// counts twice. The rules are judged on the state changes that can move
// them (a plan, a token), never by a scan per step.
//
// The watchdog treats every kind alike: an instance that has made no
// progress for Config.LockupAbortNs and is locked up of any kind then
// aborts the requests it holds — for a pinned prefiller, those whose KV
// it holds too, which their decoders drop — and they fail with a reason
// naming the instance and the kind. A request with a sequence inside
// another instance's step is aborted when that step ends; one whose KV is
// on the wire, at the next watch.

// LockKind is the kind of an instance's lock-up; NoLock: none. Its name is
// results.LockNames's.
type LockKind uint8

// The lock-up kinds: results' kinds in the same order, one up.
const (
	NoLock LockKind = iota
	LockDeadlock
	LockPreemptionLoop
	LockPinned
	numLockKinds
)

var (
	_ [int(numLockKinds) - 1 - results.NumLockKinds]struct{}
	_ [results.NumLockKinds - int(numLockKinds) + 1]struct{}
)

// String names the kind as reports do ("" for NoLock).
func (k LockKind) String() string {
	if k == NoLock || k >= numLockKinds {
		return ""
	}
	return results.LockNames[k-1]
}

// lockState is an instance's lock-ups: the stuck spell under way, the
// spells counted by kind, and the last one counted (for chains).
type lockState struct {
	open    lockSpell // the stuck spell under way, deadlock or pinned (kind NoLock: none)
	floorNs int64     // a preemption loop counts from no earlier: the end of the last stuck spell counted
	spells  [results.NumLockKinds]int
	spellNs [results.NumLockKinds]int64
	last    lockSpell
}

// lockSpell is one lock-up spell of an instance: its kind, from fromNs to
// toNs, and the instance it waited for (−1: none, or its own memory),
// with that one's wait totals when the spell began (lockchain.go).
type lockSpell struct {
	kind         LockKind
	fromNs, toNs int64
	waitsFor     int32
	waitSnap     engine.Waits
}

// notePlan notes what instance i's scheduling pass found: a step (b), or
// none with work queued and nothing running — a stuck spell may begin or
// go on — or nothing to do.
func (c *cluster) notePlan(i int, b bool) {
	rp := &c.replicas[i]
	switch {
	case b || rp.eng.Running() > 0:
	case rp.eng.Waiting() == 0:
		rp.metrics.progressNs = -1 // idle: no busy spell to lock up
	default:
		c.noteStuck(i) // work it cannot start: perhaps a lock-up
		return
	}
	if rp.metrics.lock.open.kind != NoLock {
		c.endStuck(i)
	}
}

// noteStuck notes that instance i has queued work it cannot start: a
// spell watched like a busy one, and a stuck spell of the kind it is in
// now, if any.
func (c *cluster) noteStuck(i int) {
	m := &c.replicas[i].metrics
	if m.progressNs < 0 {
		m.progressNs = c.nowNs
		c.watch(i)
	}
	k := c.stuckKind(i)
	if k == m.lock.open.kind {
		return
	}
	if m.lock.open.kind != NoLock {
		c.endStuck(i)
	}
	if k != NoLock {
		m.lock.open = lockSpell{kind: k, fromNs: c.nowNs, waitsFor: -1}
		if k == LockPinned {
			c.waitFor(&m.lock.open, c.replicas[i].held.heaviest())
		}
	}
}

// stuckKind is the kind of stuck spell instance i, which has queued work,
// nothing running and no step it can start, is in: none while KV, or a
// copy from a lower tier, is on its way to it, in a recompile pause, or
// while the only KV it holds for decoders is on the wire, handed off to
// the store or stranded until its hold ends (each ends by itself: KV
// stranded forever, with no timeout, does not); pinned while it holds KV
// decoders have not pulled; else a deadlock.
func (c *cluster) stuckKind(i int) LockKind {
	rp := &c.replicas[i]
	switch in := rp.eng; {
	case in.Pulling() > 0 || in.Recompiling():
		return NoLock
	case rp.held.n > 0:
		return LockPinned
	case c.holdsForPulls(i): // KV on the wire, handed to the store, or stranded until its hold ends
		return NoLock
	}
	return LockDeadlock
}

// endStuck ends instance i's stuck spell now; it is a lock-up if it lasted
// longer than the threshold.
func (c *cluster) endStuck(i int) {
	l := &c.replicas[i].metrics.lock
	s := l.open
	s.toNs, l.open.kind = c.nowNs, NoLock
	if s.toNs-s.fromNs > c.cfg.LockupThresholdNs {
		c.countSpell(i, s)
		l.floorNs = c.nowNs
	}
}

// countSpell counts lock-up spell s of instance i — by kind, in the
// timeline's samples it spans and as a slice on the instance's track of a
// journey trace — and the waits-for chain it formed, if it waited for
// another instance.
func (c *cluster) countSpell(i int, s lockSpell) {
	l := &c.replicas[i].metrics.lock
	l.spells[s.kind-1]++
	l.spellNs[s.kind-1] += s.toNs - s.fromNs
	c.tl.mark(i, s.fromNs, s.toNs, s.kind)
	if c.cfg.Tracer != nil {
		c.cfg.Tracer.InstanceSpan(instanceTrack(i), "lock-up: "+s.kind.String(), s.fromNs, s.toNs)
	}
	if s.waitsFor >= 0 {
		c.noteChain(i, s)
	}
	l.last = s
}

// loopSpell is instance i's preemption loop under way at nowNs, if it has
// lasted longer than the threshold.
func (c *cluster) loopSpell(i int) (lockSpell, bool) {
	m := &c.replicas[i].metrics
	from := max(m.progressNs, m.lock.floorNs)
	s := lockSpell{kind: LockPreemptionLoop, fromNs: from, toNs: c.nowNs, waitsFor: -1}
	return s, m.progressNs >= 0 && (m.pending > 0 || m.preemptedNow) && c.nowNs-from > c.cfg.LockupThresholdNs
}

// endLock ends, at a crash, the stuck spell of instance i, if any.
func (c *cluster) endLock(i int) {
	if c.replicas[i].metrics.lock.open.kind != NoLock {
		c.endStuck(i)
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

// lockedKind is the kind of lock-up instance i is in now: stuck (pinned,
// or a deadlock) with its work still queued and nothing running, or
// stalled on recovering what preemption destroyed (victims pending, or a
// preemption since its last progress); NoLock otherwise.
func (c *cluster) lockedKind(i int) LockKind {
	rp := &c.replicas[i]
	in, m := rp.eng, &rp.metrics
	switch {
	case m.lock.open.kind != NoLock && !in.Busy() && in.Running() == 0 && in.Waiting() > 0:
		return m.lock.open.kind
	case m.pending > 0 || m.preemptedNow:
		return LockPreemptionLoop
	}
	return NoLock
}

// onWatchdog handles instance i after LockupAbortNs without progress. If
// it is locked up, of any kind, its requests are aborted, at the end of
// the step in flight if there is one. A long prefill, or KV on its way, is
// not a lock-up: the watch goes on.
func (c *cluster) onWatchdog(i int) {
	rp := &c.replicas[i]
	in := c.touch(i)
	if !in.Busy() && in.Running() == 0 && in.Waiting() > 0 {
		c.noteStuck(i) // what it waits for may have changed since its last pass (KV stranded, or pulled)
	}
	if c.lockedKind(i) == NoLock {
		c.q.push(c.nowNs+c.cfg.LockupAbortNs, classWatchdog, int32(i))
		return
	}
	rp.watching = false
	if rp.eng.Busy() {
		rp.abortAfterStep = true
		return
	}
	c.abortLocked(i)
}

// abortLocked ends, as failed, the requests of locked-up instance i, and
// counts its lock-up — its stuck spell, or its preemption loop — whatever
// its length: the watchdog found it locked.
func (c *cluster) abortLocked(i int) {
	rp := &c.replicas[i]
	rp.abortAfterStep = false
	m := &rp.metrics
	s, _ := c.loopSpell(i)
	if l := &m.lock; l.open.kind != NoLock {
		s = l.open
		s.toNs, l.open.kind = c.nowNs, NoLock
	}
	c.countSpell(i, s)
	m.progressNs, m.preemptedNow, m.lock.floorNs = c.nowNs, false, c.nowNs
	reason := fmt.Sprintf("failed: %s %s: no progress for %s", rp.cfg.Name, s.kind, seconds(c.cfg.LockupAbortNs))
	c.completing = i // no plan on i until every abort is done
	for ref, f := range c.flights.all() {
		if f.on(i) {
			c.failLocked(ref, reason)
		}
	}
	c.completing = -1
	c.watch(i)
	c.kickSoon(i)
}

// failLocked ends flight ref, on a locked-up instance, as failed: now, or
// when the step in flight of an instance holding one of its sequences
// ends. A flight whose KV is on the wire to its decoder is left for the
// next watch (its prefiller's blocks come free when it lands).
func (c *cluster) failLocked(ref int32, reason string) {
	switch f := c.flights.at(ref); {
	case c.abortable(f):
		c.fail(ref, reason)
	case f.phase.inTransit() || f.failoverWaiting():
	default:
		c.pendAbort(pendingAbort{deadline{ref, f.req.ID, c.nowNs}, results.Failed, reason})
	}
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
