package engine

import (
	"math"

	"handoff/models/kv"
)

// Deferred frees (Rules.DeferFrees, vLLM PR #45357). Under asynchronous
// scheduling vLLM plans step k+1 while step k runs, so a request it
// preempts, finishes or aborts then may still be written by step k; on a
// KV consumer its blocks are therefore held back, fenced by the last step
// it was scheduled in, and return to the pool once that step's output has
// been processed (Scheduler._free_request_blocks, _drain_deferred_frees).
//
// handoff plans step k+1 when step k ends (Schedule), admitting only what
// vLLM's earlier planning could have seen (Config.AsyncScheduling); in
// vLLM's terms step k is still in flight during that pass, so the last
// step processed is k−1 — k when the instance was idle, nothing in
// flight. A departing sequence whose last step is past that is fenced:
// its blocks stay taken, as a deferredFree, until a pass whose processed
// step has reached its fence. A pass that plans nothing drains them all
// (nothing is in flight then) and tries admission again, as vLLM's engine
// loop schedules again once it has processed the step in flight.

// deferredFree is one departed sequence's blocks, held back.
type deferredFree struct {
	fence       int64 // the last step it was scheduled in
	table       []kv.BlockID
	from, to    int // its table's settled content (kv.Pool.FreeSettled)
	counted     int // its sliding-window groups' blocks, held as a count
	countedFrom int // how many of those hold content (kv.Pool.FreeCounted)
}

// deferrable reports whether s's blocks must wait for its fence: frees
// are deferred here and s was scheduled in a step not yet processed.
func (in *Instance) deferrable(s *Seq) bool {
	return in.cfg.defersFrees() && s.lastStep > in.processed
}

// deferFree holds back what s holds in the pool, as release or a
// preemption would free it: its sliding-window groups' counted blocks and
// its table, whose content from the from-th block to the to-th is
// settled. s is left with an empty table.
func (in *Instance) deferFree(s *Seq, from, to int) {
	e := deferredFree{fence: s.lastStep, table: s.blocks, from: from, to: to}
	if in.cfg.SlidingGroups > 0 {
		e.counted = in.slidingBlocks(s)
		e.countedFrom = in.cfg.SlidingGroups * max(0, min(s.committed, len(s.blocks))-int(s.skipped))
		s.skipped = 0
	}
	in.deferredBlocks += len(e.table) + e.counted
	in.deferred = append(in.deferred, e)
	s.blocks = in.spareTable()
}

// spareTable returns an empty table, reusing one a drained entry left.
func (in *Instance) spareTable() []kv.BlockID {
	if n := len(in.spare); n > 0 {
		t := in.spare[n-1]
		in.spare = in.spare[:n-1]
		return t
	}
	return nil
}

// drainDeferred returns to the pool the blocks held back for departed
// sequences whose fence is at most processed, in the order they departed.
func (in *Instance) drainDeferred(processed int64) {
	kept := in.deferred[:0]
	for _, e := range in.deferred {
		if e.fence > processed {
			kept = append(kept, e)
			continue
		}
		if e.counted > 0 {
			in.pool.FreeCounted(e.counted, e.countedFrom)
		}
		in.pool.FreeSettled(e.table, e.from, e.to)
		in.deferredBlocks -= len(e.table) + e.counted
		in.spare = append(in.spare, e.table[:0])
	}
	clear(in.deferred[len(kept):])
	in.deferred = kept
}

// DeferredBlocks is how many blocks are held back for departed sequences
// (Rules.DeferFrees): taken in the pool, held by no sequence.
func (in *Instance) DeferredBlocks() int { return in.deferredBlocks }

// victimFenced reports whether the running pass must leave the victim it
// would preempt next — the last running sequence — and stop: its free
// would be deferred (Rules.DeferFrees), and the release preempts nobody
// then (FencedVictim Wait).
func (in *Instance) victimFenced() bool {
	if in.cfg.FencedVictim != Wait || !in.cfg.defersFrees() {
		return false
	}
	last := len(in.running) - 1
	return in.due[last] > 0 || in.running[last].lastStep > in.processed // a cruising one is in every step
}

// planAgainIdle handles a pass that planned nothing while, in vLLM's
// terms, step k−1 was still in flight: vLLM's engine loop then waits for
// that step and processes its output, so every step is processed — a
// sequence that departs before the next pass is fenced by none — and,
// when the pass held frees back or cut the running set short, the
// deferred frees drain and it schedules again, at once.
func (in *Instance) planAgainIdle(k int64) {
	done := in.stats.Steps - int64(len(in.flights)) // micro-batches in flight (pipeline.go) stay unprocessed
	if len(in.step)+in.cruising > 0 || in.processed == done {
		return
	}
	in.processed = done
	if len(in.deferred) == 0 && in.cut == in.cutEnd {
		return
	}
	in.drainDeferred(in.processed)
	in.cutoffNs = math.MaxInt64
	in.cut, in.cutEnd = 0, 0 // the running set the first pass cut may have shrunk since
	in.schedulePass(k, false)
}
