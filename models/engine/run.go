package engine

import (
	"math"

	"handoff/models/perf"
)

// Runs: steady steps known in advance.
//
// A pure steady step is one in which every running sequence cruises, none
// is due, nothing waits to be admitted and nothing else is pending: each
// sequence computes one token, the step takes its phase's blocks as one
// count, and its batch is the previous one with every context one longer.
// Nothing inside the instance can end such a stretch before the first due;
// only the outside can (a request arriving, KV arriving, an abort), and the
// caller that knows when the outside next touches the instance may price
// the whole stretch at once and step through it later (sim/steprun.go).
// RunSteps says how long the stretch is; AdvanceSteady steps through it.

// RunSteps is how many pure steady steps may follow the step in flight, at
// most most: 0 unless the step in flight is itself pure. Each of them takes
// blocks as the step in flight did, one per sequence at a block boundary,
// and they must all be free now.
func (in *Instance) RunSteps(most int) int {
	n := in.cruising
	if !in.inStep || len(in.step) != 0 || n == 0 || n != len(in.running) || in.noCruise || in.lostStep ||
		in.waiting.len()+in.ready.len()+in.swapped.len() != 0 || len(in.cruiseNext) != 0 ||
		in.cfg.SlidingGroups > 0 || len(in.cfg.Tiers) != 0 || in.pulling != 0 || len(in.deferred) != 0 {
		return 0
	}
	// No sequence is due before nextDue (a lower bound, exact since the
	// last steady step that reached it).
	k := in.stats.Steps // the step in flight
	m := int(min(int64(most), in.nextDue-1-k))
	if in.phaseCount == nil {
		return max(m, 0)
	}
	free := in.pool.FreeBlocks()
	for j := 1; j <= m; j++ {
		if free -= int(in.phaseCount[in.phaseOf(k+int64(j))]); free < 0 {
			return j - 1
		}
	}
	return max(m, 0)
}

// RunBatch sets b to the batch of the j-th pure steady step after the
// step in flight (see RunSteps): the step in flight's, every context j
// tokens longer.
func (in *Instance) RunBatch(j int, b *perf.Batch) {
	*b = in.batch
	b.DecodeContext += int64(j) * int64(b.DecodeSeqs)
}

// AdvanceSteady completes the step in flight, started at startNs, at
// ends[0], and each next one at the next end, all but the last planned as
// the pure steady steps RunSteps counted; the last one planned is left in
// flight. It leaves the instance as Complete and then Schedule at each end
// would, in O(1) (the steps' blocks taken in one count: the free queue
// gives them in the same order either way). Every step samples one token
// for each of the n running sequences, which it reports, its gap the time
// since the previous end: the first one's, firstGapNs, since the step
// before the one in flight ended.
func (in *Instance) AdvanceSteady(startNs int64, ends []int64) (n int, firstGapNs int64) {
	j, last := len(ends), ends[len(ends)-1]
	k := in.stats.Steps // the step in flight
	if j == 0 || k+int64(j) >= in.nextDue {
		panic("engine: a run past its sequences' first due")
	}
	n, firstGapNs = in.cruising, ends[0]-in.lastEndNs
	// Complete, j times: one token for every sequence, none due.
	in.stats.DecodeTokens += int64(n * j)
	in.busyNs += last - startNs // the steps are back to back
	in.lastEndNs, in.lastStart = last, startNs
	if j > 1 {
		in.lastStart = ends[j-2]
	}
	// Schedule, j times: nothing queued, so admission is moot and every
	// wait is busy.
	in.res.reset()
	in.clockNs = last
	in.settleWaits(last)
	in.waitCause, in.stop = WaitBusy, WaitBusy
	in.cutoffNs = math.MaxInt64
	if in.cfg.AsyncScheduling {
		in.cutoffNs = in.lastStart
	}
	if in.phaseCount != nil {
		need := 0
		for step := k + 1; step <= k+int64(j); step++ {
			need += int(in.phaseCount[in.phaseOf(step)])
		}
		if need > 0 && !in.pool.AllocateAnonymous(need) {
			panic("engine: a run's steps are short of blocks")
		}
	}
	in.stats.SteadySteps += int64(j)
	in.stats.Steps += int64(j)
	in.batch = perf.Batch{DecodeSeqs: n, DecodeContext: in.cruiseBase + int64(n)*in.stats.Steps}
	return n, firstGapNs
}
