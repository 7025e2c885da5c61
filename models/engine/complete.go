package engine

import (
	"slices"

	"handoff/models/kv"
)

// Complete applies the step in flight, which ran from startNs to nowNs:
// every scheduled sequence advances by its tokens; those that reach the end
// of their context sample one token; those that have generated all they
// will here finish (freeing their blocks, or holding them for a prefill-role
// transfer). Cost: O(step size + running).
func (in *Instance) Complete(startNs, nowNs int64) *StepResult {
	if in.pipelined() {
		return in.completeMicro(startNs, nowNs)
	}
	if !in.inStep {
		panic("engine: completing with no step in flight")
	}
	in.res.reset()
	in.clockNs = nowNs
	in.completeCruising(nowNs)
	in.busyNs += nowNs - startNs
	in.lastEndNs, in.lastStart = nowNs, startNs
	for _, e := range in.step {
		s := e.s
		s.account(startNs, nowNs)
		// A verify step's entry counts its drafts past the context (spec.go).
		drafts := max(0, s.computed+int(e.tokens)-s.Tokens())
		s.computed += int(e.tokens) - drafts
		in.commitFull(s)
		// A sequence this step reports (first token, recovered) is read by
		// the caller as it stands, so it may only cruise from its next step.
		steady := s.computed == s.Tokens()
		first := steady && !s.reprefill && s.Generated == 0
		if steady {
			steady = !s.reprefill && s.Generated > 0
			if s.reprefill {
				s.reprefill = false
				in.res.Recovered = append(in.res.Recovered, s)
				in.unmarkVictim(s)
			}
			in.emitToken(s, nowNs)
			if drafts > 0 {
				in.emitAccepted(s, drafts)
			}
		}
		switch pos := int(e.pos); {
		case s.state != stateRunning:
			in.due[pos] = finishedEntry
		case steady:
			in.maybeCruise(pos, s)
		case first:
			// Its first token: the caller reads it as it stands, so it
			// may cruise from the next planning pass (startCruises).
			in.cruiseNext = append(in.cruiseNext, stepEntry{s: s, pos: e.pos})
		}
	}
	clear(in.step)
	in.step = in.step[:0]
	if len(in.res.Finished) > 0 {
		in.removeFinished()
	}
	in.settleEvictions()
	in.inStep = false
	return &in.res
}

// emitToken records one sampled token and finishes the sequence when it is
// done here.
func (in *Instance) emitToken(s *Seq, nowNs int64) {
	s.Generated++
	if s.Generated == 1 {
		in.res.FirstTokens = append(in.res.FirstTokens, s)
	} else {
		in.res.TokenGapsNs = append(in.res.TokenGapsNs, nowNs-s.LastTokenNs)
		in.stats.DecodeTokens++
	}
	s.LastTokenNs = nowNs
	if s.Generated >= s.MaxNew || s.Tokens() >= in.cfg.MaxModelLen {
		in.finish(s)
	}
}

// finish ends a sequence's work here.
func (in *Instance) finish(s *Seq) {
	in.res.Finished = append(in.res.Finished, s)
	if s.Hold {
		in.offloadFinished(s)
		// What slid out of the window is freed before the transfer
		// (_connector_finished in vllm/v1/core/sched/scheduler.py).
		in.slidingFree(s, s.computed)
		s.state = stateHolding
		in.holding++
		return
	}
	in.commitOutput(s)
	in.offloadFinished(s)
	in.mem.release(s)
	s.state = stateDone
}

// settlePrivate hashes the sequence's full private blocks and records them
// in its blocks, so that after a preemption it can find them again. Blocks
// of a named output are shareable, so they are published instead.
func (in *Instance) settlePrivate(s *Seq) {
	if !in.cfg.PrefixCaching || s.committed <= s.shared {
		return
	}
	in.hashTo(s, s.committed*in.cfg.BlockSize)
	for j := s.shared; j < s.committed; j++ {
		if s.namedOut {
			in.pool.Commit(s.blocks, j, s.hashes[j])
		} else {
			in.pool.CommitPrivate(s.blocks, j, s.hashes[j])
		}
	}
}

// removeFinished drops finished sequences from the running set, keeping the
// order of the rest (and the positions of those to cruise next). Those
// ahead of the first finished one stay where they are; the runs between
// finished ones move down whole.
func (in *Instance) removeFinished() {
	first := slices.Index(in.due, finishedEntry)
	kept, next := first, 0
	for next < len(in.cruiseNext) && int(in.cruiseNext[next].pos) < first {
		next++
	}
	for i := first; i < len(in.running); {
		if in.due[i] == finishedEntry {
			i++
			continue
		}
		end := i + 1
		for end < len(in.running) && in.due[end] != finishedEntry {
			end++
		}
		for next < len(in.cruiseNext) && int(in.cruiseNext[next].pos) < end {
			in.cruiseNext[next].pos -= int32(i - kept)
			next++
		}
		copy(in.running[kept:], in.running[i:end])
		copy(in.due[kept:], in.due[i:end])
		copy(in.phase[kept:], in.phase[i:end])
		copy(in.trip[kept:], in.trip[i:end])
		kept += end - i
		i = end
	}
	clear(in.running[kept:])
	in.running, in.due, in.phase, in.trip = in.running[:kept], in.due[:kept], in.phase[:kept], in.trip[:kept]
}

// commitFull publishes the sequence's newly completed full blocks to the
// prefix cache.
func (in *Instance) commitFull(s *Seq) {
	if !in.cfg.PrefixCaching || s.computed < (s.committed+1)*in.cfg.BlockSize {
		return // no new full block (the common decode step)
	}
	full := s.computed / in.cfg.BlockSize
	if full <= s.committed {
		return
	}
	// Shareable blocks are published now; private ones only get a hash if
	// a preemption ever needs one (settlePrivate), and are freed as
	// anonymous content otherwise (kv.FreeSettled).
	if shared := min(full, s.shared); shared > s.committed {
		in.hashTo(s, shared*in.cfg.BlockSize)
		for j := s.committed; j < shared; j++ {
			in.pool.Commit(s.blocks, j, s.hashes[j])
		}
	}
	s.committed = full
}

// hashTo extends the sequence's block hashes to cover its first tokens tokens.
func (in *Instance) hashTo(s *Seq, tokens int) {
	if n := tokens / in.cfg.BlockSize; len(s.hashes) < n {
		s.hashes = kv.AppendBlockHashes(s.hashes, in.content(s, n), s.UniqueID, tokens, in.cfg.BlockSize)
	}
}
