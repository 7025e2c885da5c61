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
// the whole stretch at once and step through it later (sim/run.go's runs).
// RunSteps says how long the stretch is; NextSteady steps through it.

// RunSteps is how many pure steady steps may follow the step in flight, at
// most most: 0 unless the step in flight is itself pure. Each of them takes
// blocks as the step in flight did, one per sequence at a block boundary,
// and they must all be free now.
func (in *Instance) RunSteps(most int) int {
	n := in.cruising
	if !in.inStep || len(in.step) != 0 || n == 0 || n != len(in.running) || in.noCruise || in.lostStep ||
		in.waiting.len()+in.ready.len()+in.swapped.len() != 0 || len(in.cruiseNext) != 0 ||
		in.cfg.SlidingGroups > 0 || len(in.cfg.Tiers) != 0 || in.pulling != 0 {
		return 0
	}
	k := in.stats.Steps // the step in flight
	firstDue := int64(1<<62 - 1)
	for _, d := range in.due {
		firstDue = min(firstDue, d)
	}
	m := int(min(int64(most), firstDue-1-k))
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

// NextSteady completes the step in flight, started at startNs, at endNs
// and plans the next, one of the pure steady steps RunSteps counted,
// leaving the instance as Complete and then Schedule would, in O(1). It
// reports the tokens the completed step sampled and their gap since the
// previous ones.
func (in *Instance) NextSteady(startNs, endNs int64) (tokens int, gapNs int64) {
	// Complete: one token for every sequence, none due.
	n := in.cruising
	tokens, gapNs = n, endNs-in.lastEndNs
	in.stats.DecodeTokens += int64(n)
	in.busyNs += endNs - startNs
	in.lastEndNs, in.lastStart = endNs, startNs
	// Schedule: nothing queued, so admission is moot and waits are busy.
	in.res.reset()
	in.clockNs = endNs
	in.settleWaits(endNs)
	in.waitCause, in.stop = WaitBusy, WaitBusy
	in.cutoffNs = math.MaxInt64
	if in.cfg.AsyncScheduling {
		in.cutoffNs = in.lastStart
	}
	k := in.stats.Steps + 1
	if k >= in.nextDue { // as steady's scan would find it
		next := int64(math.MaxInt64)
		for _, d := range in.due {
			next = min(next, d)
		}
		in.nextDue = next
	}
	if in.phaseCount != nil {
		if need := int(in.phaseCount[in.phaseOf(k)]); need > 0 && !in.pool.AllocateAnonymous(need) {
			panic("engine: a run's step is short of blocks")
		}
	}
	in.stats.SteadySteps++
	in.batch = perf.Batch{DecodeSeqs: n, DecodeContext: in.cruiseBase + int64(n)*k}
	in.stats.Steps++
	return tokens, gapNs
}
