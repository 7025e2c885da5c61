package sim

import "handoff/models/perf"

// Pipeline-parallel instances (Instance.Pipeline, engine.Config.Stages >
// 1). vLLM's engine core keeps up to pp micro-batches in flight
// (step_with_batch_queue in vllm/v1/engine/core.py): it schedules a new
// batch whenever its batch queue has room, each batch passing through
// the stages in order, a stage taking the next batch as soon as it has
// handed the last one on. When the scheduler finds nothing new to run
// while batches are in flight, the queue fills with empty batches and the
// loop blocks on the oldest: work that arrives meanwhile waits for the
// next batch to complete (starved below). Work arriving at the very
// instant of that plan is still planned: the loop takes in the requests
// queued for it before each schedule.
//
// pipeState keeps each stage's clock: a micro-batch launched at t enters
// stage 0 when it is free, each later stage when the activations have
// crossed the hop to it and the stage is free, and completes when the
// last stage is done — the flow shop's recurrence. So a micro-batch alone
// takes the sum of its stages and hops; micro-batches back to back leave
// one per slowest stage; and when fewer are ready than stages, the stages
// idle (the bubble). Completions come in launch order: one step event, at
// the oldest's end, is queued at a time.

// pipeState is one pipeline-parallel instance's stages and micro-batches
// in flight.
type pipeState struct {
	p         *perf.Pipeline
	freeNs    []int64 // when each stage is done with its last micro-batch
	startsNs  []int64 // launches of the micro-batches in flight, oldest first
	endsNs    []int64 // their completions
	starved   bool    // the last plan, at starvedNs, found nothing while some were in flight
	starvedNs int64
	coverNs   int64 // busy time is counted up to here (overlapping micro-batches count once)
}

func newPipeState(p *perf.Pipeline) *pipeState {
	return &pipeState{p: p, freeNs: make([]int64, p.Stages())}
}

// launch prices micro-batch b launched at nowNs through the stages, each
// stage's time stretched by slow (a straggler; 0: none), and returns its
// completion.
func (ps *pipeState) launch(nowNs int64, b *perf.Batch, slow float64) int64 {
	t := nowNs
	last := len(ps.freeNs) - 1
	for k := range ps.freeNs {
		d := max(ps.p.StageNs(b, k), 1)
		if slow > 0 {
			d = max(int64(float64(d)*slow+0.5), 1)
		}
		t = max(t, ps.freeNs[k]) + d
		ps.freeNs[k] = t
		if k < last {
			t += ps.p.HopNs(b, k)
		}
	}
	ps.startsNs = append(ps.startsNs, nowNs)
	ps.endsNs = append(ps.endsNs, t)
	return t
}

// complete takes the oldest micro-batch off, ending at nowNs, and returns
// its launch and the time since which the instance was not yet counted
// busy.
func (ps *pipeState) complete(nowNs int64) (startNs, busyFromNs int64) {
	startNs = ps.startsNs[0]
	busyFromNs = max(startNs, ps.coverNs)
	ps.coverNs = nowNs
	copy(ps.startsNs, ps.startsNs[1:])
	copy(ps.endsNs, ps.endsNs[1:])
	ps.startsNs, ps.endsNs = ps.startsNs[:len(ps.startsNs)-1], ps.endsNs[:len(ps.endsNs)-1]
	ps.starved = false
	return startNs, busyFromNs
}

// losePipe forgets pipeline-parallel instance i's micro-batches in flight
// and its stages' clocks, counting it busy until now: it crashed.
func (c *cluster) losePipe(i int) {
	rp := &c.replicas[i]
	ps := rp.pipe
	if len(ps.startsNs) > 0 {
		rp.busyNs += c.nowNs - max(ps.startsNs[0], ps.coverNs)
	}
	ps.startsNs, ps.endsNs = ps.startsNs[:0], ps.endsNs[:0]
	clear(ps.freeNs)
	ps.starved, ps.coverNs = false, c.nowNs
}

// kickPipe launches micro-batches on pipeline-parallel instance i while
// its batch queue has room and its scheduler finds work, as vLLM's engine
// loop does; after a plan that found nothing with micro-batches in
// flight, it waits for the next to complete.
func (c *cluster) kickPipe(i int) {
	rp := &c.replicas[i]
	ps := rp.pipe
	for !rp.eng.Busy() && !(ps.starved && c.nowNs > ps.starvedNs && len(ps.endsNs) > 0) {
		c.kicking = true
		b := c.plan(i)
		c.kicking = false
		if b == nil {
			ps.starved, ps.starvedNs = true, c.nowNs
			return
		}
		endNs := ps.launch(c.nowNs, b, rp.slow)
		c.busyWith(i, b, endNs-c.nowNs)
		if len(ps.endsNs) == 1 {
			rp.stepStartNs = c.nowNs
			c.pushStep(i, endNs)
		}
	}
}

// completeMicro takes instance i's oldest micro-batch off its pipeline,
// queues the next one's completion, and returns the start and busy-from
// times its step event applies (onStep).
func (c *cluster) completeMicro(i int) (startNs, busyFromNs int64) {
	rp := &c.replicas[i]
	startNs, busyFromNs = rp.pipe.complete(c.nowNs)
	if len(rp.pipe.endsNs) > 0 {
		rp.stepStartNs = rp.pipe.startsNs[0]
		c.pushStep(i, rp.pipe.endsNs[0])
	}
	return startNs, busyFromNs
}
