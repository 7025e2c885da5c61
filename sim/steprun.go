package sim

import (
	"handoff/models/engine"
	"handoff/models/router"
)

// Runs: several steady steps of one instance in one event.
//
// Most steps of a busy decoder are pure steady steps (engine/run.go): every
// running sequence computes one token and nothing inside the instance can
// change before its first sequence is due. When such a step is planned
// (kick), the instance prices the pure steps that may follow it and queues
// one event, at the end of the last. Its engine is not advanced: it stays
// at the step in flight, and whatever reads or changes the instance first
// brings it up to the present (sync), exactly as the steps' own events
// would have, in the same order:
//
//   - an event ordered before a step ending at this very instant (a network
//     event, or the step of an instance with a lower index) sees that step
//     still in flight; any other sees it done;
//   - a step that ends at this instant, seen by an event ordered after it,
//     had its next step planned after the instant's events (kickSoon defers
//     a plan while other events are due then, and the event seeing it was
//     one), so it ends the run there, and the plan is queued (classKick) —
//     but for the events ordered after every plan (a changing fleet's
//     scrapes, decisions, faults and newly visible instances), which see
//     the next step planned (syncThrough);
//   - anything that changes the instance (a request, KV, an abort) ends the
//     run after the step in flight, whose own event is queued instead
//     (touch).
//
// A request given up on while an instance holding it is inside a step is
// aborted at the end of a step — it is retried at every step's end, of
// any instance — so the first such abandon ends every instance's run with
// its step in flight (endAllRuns), and no run starts while any waits.
//
// A plan (kick) comes at once when no other event is due at its instant,
// else after them; a run's steps are not events, so a plan may come at
// once where, step by step, it would have come after another instance's
// step at that instant (and a plan that read another instance would see
// it as the kick's place in the instant says, not as instance order among
// the instant's kicks would). That is exact only while plans neither read
// nor change another instance, so runs are also off where a plan may hand
// work to one: KV streamed to decoders before the prefill ends, decoders
// that refuse requests back to the router (and so to the router's view of
// the others), and lower KV tiers.
//
// Step and kick events are ordered by instance index (queue.go), so a step
// event queued late keeps its place among its instant's. In a changing
// fleet, failed-over flights waiting to go again are retried at every
// step's end, so while any waits no run starts, and the first to wait ends
// every run (endAllRuns); a straggler's slowdown ends its instance's run
// before it changes the step time; everything else the fleet does reads or
// changes instances through sync and touch. Runs are off where something
// else happens at every step's end or the argument was not made (journey
// traces; a data-parallel group's shared step; a router that polls its
// held requests, as llm-d's flow control does), and for the test switch
// Config.eager. TestFastPathsMatchEager and TestRunsMatchEagerOnAGrid hold
// runs to eager steps.

// maxRunSteps bounds the steps priced ahead, as an arrival that cuts a run
// short wastes the price of the rest.
const maxRunSteps = 64

// stepRun is an instance's run: the ends of its planned steps, the one in
// flight at ends[at], the last with its event queued. Empty: no run.
type stepRun struct {
	ends []int64
	at   int
}

// runsAllowed reports whether the configuration lets instances run
// (see above).
func (c *cluster) runsAllowed() bool {
	if c.cfg.eager || c.cfg.Tracer != nil || len(c.groups) > 0 {
		return false
	}
	if p, ok := c.cfg.Router.(router.Poller); ok && p.PollNs() > 0 {
		return false // its held requests are offered again between steps' ends, reading the instances mid-run
	}
	for i := range c.replicas {
		in := c.replicas[i].cfg
		if in.StreamKV || in.Engine.Preemption == engine.Reject || c.replicas[i].eng.MayRefuse() || len(in.Engine.Tiers) > 0 {
			return false // a plan that hands work to another instance (see above)
		}
	}
	return true
}

// startRun plans instance i's run from its step in flight, which ends at
// endNs, and returns the end of the run's last step.
func (c *cluster) startRun(i int, endNs int64) int64 {
	rp := &c.replicas[i]
	if !c.runs || rp.slow > 0 || rp.abortAfterStep || rp.cfg.Role == RolePrefill || len(c.client.pending) > 0 ||
		c.fleet != nil && len(c.fleet.pending) > 0 {
		return endNs
	}
	m := rp.eng.RunSteps(maxRunSteps)
	if m == 0 {
		return endNs
	}
	r := &rp.run
	r.ends, r.at = append(r.ends[:0], endNs), 0
	c.runStats.Priced += int64(m)
	b := &c.runBatch
	for j := 1; j <= m; j++ {
		rp.eng.RunBatch(j, b)
		endNs += max(rp.cfg.Timer.StepNs(b), 1)
		r.ends = append(r.ends, endNs)
	}
	return endNs
}

// engine is instance i's engine, brought up to the present.
func (c *cluster) engine(i int) *engine.Instance {
	c.sync(i)
	return c.replicas[i].eng
}

// touch brings instance i up to the present before something changes it:
// its run ends with the step in flight.
func (c *cluster) touch(i int) *engine.Instance {
	c.sync(i)
	rp := &c.replicas[i]
	if r := &rp.run; len(r.ends) > 0 {
		c.pushStep(i, r.ends[r.at])
		c.runStats.Dropped += int64(len(r.ends) - 1 - r.at)
		r.ends = r.ends[:0]
	}
	return rp.eng
}

// endAllRuns ends every instance's run with its step in flight: each
// step's end is an event again (while failed-over flights wait, every
// step's end retries them).
func (c *cluster) endAllRuns() {
	for i := range c.replicas {
		if len(c.replicas[i].run.ends) > 0 {
			c.touch(i)
		}
	}
}

// sync brings instance i's run up to the present as the event being
// handled sees it (see above).
func (c *cluster) sync(i int) {
	r := &c.replicas[i].run
	if len(r.ends) == 0 {
		return
	}
	if c.cur.class() > classKick { // fleet events: see syncThrough
		c.syncThrough(i, c.nowNs)
		return
	}
	before := c.cur.class() == classNetwork || c.cur.class() == classStep && int(c.cur.arg) < i
	last, upto := len(r.ends)-1, r.at
	for upto < last && r.ends[upto] < c.nowNs {
		upto++
	}
	c.advance(i, upto)
	switch {
	case upto == last:
		r.ends = r.ends[:0] // the last step is in flight, its event queued
	case r.ends[upto] == c.nowNs && !before:
		c.endRunAt(i)
	}
}

// syncThrough brings instance i's run through the end of instant atNs,
// every step ending then done and the next planned: as timeline samples
// see it, and as the events ordered after every plan of their instant
// (classFleet, classPoll) do — step by step, a step ending at their
// instant had its next planned before them.
func (c *cluster) syncThrough(i int, atNs int64) {
	r := &c.replicas[i].run
	if len(r.ends) == 0 {
		return
	}
	last, upto := len(r.ends)-1, r.at
	for upto < last && r.ends[upto] <= atNs {
		upto++
	}
	if c.advance(i, upto); upto == last {
		r.ends = r.ends[:0]
	}
}

// finishRun advances instance i through its run's steps before the last,
// whose event is being handled.
func (c *cluster) finishRun(i int) {
	if r := &c.replicas[i].run; len(r.ends) > 0 {
		c.advance(i, len(r.ends)-1)
		r.ends = r.ends[:0]
	}
}

// advance completes instance i's steps from the one in flight to the
// run's step upto, exclusive, which it leaves in flight, as onStep and
// kick would have step by step.
func (c *cluster) advance(i, upto int) {
	rp := &c.replicas[i]
	r := &rp.run
	if upto <= r.at {
		return
	}
	ends := r.ends[r.at:upto]
	tokens, gapNs := rp.eng.AdvanceSteady(rp.stepStartNs, ends)
	for k, end := range ends {
		if k > 0 {
			gapNs = end - ends[k-1]
		}
		c.stepDone(i, end, tokens, gapNs)
		rp.stepStartNs = end
	}
	c.runStats.Steps += int64(len(ends))
	r.at = upto
}

// endRunAt completes instance i's step in flight, ending now, and ends its
// run: the next step is planned after this instant's events.
func (c *cluster) endRunAt(i int) {
	rp := &c.replicas[i]
	res := rp.eng.Complete(rp.stepStartNs, c.nowNs)
	c.stepDone(i, c.nowNs, res.SteadyTokens, res.SteadyGapNs)
	c.runStats.Dropped += int64(len(rp.run.ends) - 1 - rp.run.at)
	rp.run.ends = rp.run.ends[:0]
	rp.stepGen++ // the run's event goes moot
	if !rp.kickPending {
		rp.kickPending = true
		c.q.pushInstance(c.nowNs, classKick, int32(i), 0)
	}
	c.runStats.Ties++
}

// stepDone applies what a pure steady step of instance i, ending at endNs,
// did to the cluster's figures: tokens sampled gapNs after the previous.
func (c *cluster) stepDone(i int, endNs int64, tokens int, gapNs int64) {
	rp := &c.replicas[i]
	rp.busyNs += endNs - rp.stepStartNs
	if tokens > 0 {
		c.itl.AddN(gapNs, int64(tokens))
	}
	c.progressAt(i, tokens, endNs)
	rp.metrics.victims(rp.eng.Victims(), endNs)
}
