package engine

// Cruising: steady decoding without touching the sequence.
//
// Most of a run's work is decode steps in which a sequence computes one
// token and samples the next: its counters each grow by one, the step's
// time is charged to it, and the gap since its last token is the step's.
// Done eagerly, that is a visit to every running sequence in every step,
// and in a many-instance run each visit is a cache miss.
//
// So after a step in which a running sequence sampled a token, it cruises
// until the first step that needs it: the one that produces its last token
// here, or one whose token needs a new block when none is free. Its
// running entry carries the number of the next step to look at (due): the
// last-token step or its next block boundary. At a boundary it takes a
// block from the pool as a mere count (kv.Pool.AllocateAnonymous: the free
// queue changes exactly as with Allocate), kept in its trip, and cruises
// on; otherwise nothing about it is read or written. The instance keeps
// what cruising sequences have in
// common: their number, the sum of their contexts (for the step's price),
// the count of steps and the running total of step durations. Rather than
// remember where its cruise began, a sequence keeps its token counters
// relative to the step count and its accounting relative to the busy time:
// as it starts cruising after step k, computed and Generated drop by k, so
// that adding the steps completed gives their current values; the compute
// bucket drops by the busy time then, the queue bucket gains it and loses
// the time of its mark, so that adding the busy time and the gaps between
// steps (the time since, less the busy time) settles both. When a cruising
// sequence is due, preempted, or left out of a step by the token budget,
// settle brings it up to date exactly as the skipped steps would have
// (claiming the blocks it took into its table), and it is scheduled
// eagerly from there. All arithmetic is on integers, so the
// two ways give identical results (TestCruiseMatchesEager checks this
// against an instance that never cruises).

// stepEntry is one sequence computing in the step in flight (cruising ones
// aside): its position in the running set and its tokens.
type stepEntry struct {
	s      *Seq
	pos    int32
	tokens int32
}

// finishedEntry is the due of a running sequence that just finished.
const finishedEntry = -1

// trip is what the instance keeps of one cruise besides its due step.
type trip struct {
	lastStep int64 // the step producing its last token here
	grown    int32 // blocks its table took while cruising, held as a count (kv.Pool.AllocateAnonymous)
	// slideBack, for a hybrid model, places the next step whose token
	// makes its window drop a block: lastStep − slideBack; ≤ 0: none before
	// lastStep (sliding.go).
	slideBack int32
}

// addRunning appends s to the running set and returns its position.
func (in *Instance) addRunning(s *Seq) int {
	in.running = append(in.running, s)
	in.due = append(in.due, 0)
	in.trip = append(in.trip, trip{})
	return len(in.running) - 1
}

// UncountedBlocks is how many blocks cruising sequences hold beyond their
// SeqBlocks (taken while cruising, added to their tables when they settle,
// less the sliding-window blocks they dropped): with those, the sequences'
// blocks add up to the pool's references. Cost O(running): for audits.
func (in *Instance) UncountedBlocks() int {
	n := 0
	for i, t := range in.trip {
		n += int(t.grown) * (1 + in.cfg.SlidingGroups)
		if s := in.running[i]; in.due[i] > 0 && in.cfg.SlidingGroups > 0 {
			last := s.computed + int(in.stats.Steps) - 1 // computed before its last step
			n -= in.cfg.SlidingGroups * (in.cfg.slidingSkip(last) - int(s.skipped))
		}
	}
	return n
}

// popRunning removes the last sequence of the running set and returns it.
func (in *Instance) popRunning() *Seq {
	last := len(in.running) - 1
	s := in.running[last]
	in.running, in.due, in.trip = in.running[:last], in.due[:last], in.trip[:last]
	return s
}

// growCruising gives the cruising sequence at position pos, due at step
// k only because its token needs a new block, that block — as a count, so
// the sequence itself is not touched — and keeps it cruising. It reports
// false, changing nothing, when no block is free.
func (in *Instance) growCruising(pos int, k int64) bool {
	if in.cfg.SlidingGroups > 0 {
		return in.crossSliding(pos, k)
	}
	if !in.pool.AllocateAnonymous(1) {
		return false
	}
	t := &in.trip[pos]
	t.grown++
	in.due[pos] = min(k+int64(in.cfg.BlockSize), t.lastStep)
	return true
}

// maybeCruise lets the running sequence s at position pos, which just
// sampled a token (not its first here, nor the one ending a recompute) in
// step k = in.stats.Steps, cruise if its next step needs nothing of it.
func (in *Instance) maybeCruise(pos int, s *Seq) {
	if in.noCruise || in.cfg.PrefixCaching && s.committed < s.shared {
		return
	}
	k := in.stats.Steps
	// The step producing its last token here, and the first step whose
	// token does not fit in its blocks (slots hold the whole sequence).
	last := k + int64(min(s.MaxNew-s.Generated, in.cfg.MaxModelLen-s.Tokens()))
	due := min(last, k+int64(in.mem.room(s))+1)
	var slideBack int32
	if in.cfg.SlidingGroups > 0 {
		slide := in.firstSlide(s, k)
		due = min(due, slide)
		slideBack = int32(max(0, last-slide))
	}
	if due <= k+1 {
		return
	}
	in.due[pos] = due
	in.trip[pos] = trip{lastStep: last, slideBack: slideBack}
	s.computed -= int(k)
	s.Generated -= int(k)
	s.Acct[AcctCompute] -= in.busyNs
	s.Acct[AcctQueue] += in.busyNs - s.markNs
	in.cruising++
	in.cruiseBase += int64(s.computed)
}

// settle ends the cruise of the sequence at running position pos, if it
// cruises, applying the steps it took part in since it began: one token
// each, their durations charged to compute and the gaps between them to
// the queue, and the blocks it took appended to its table. Call it between
// steps only.
func (in *Instance) settle(pos int) {
	if in.due[pos] <= 0 {
		return
	}
	in.due[pos] = 0
	s := in.running[pos]
	if t := &in.trip[pos]; t.grown > 0 {
		s.blocks = in.pool.Claim(s.blocks, int(t.grown))
		t.grown = 0
	}
	in.cruising--
	in.cruiseBase -= int64(s.computed)
	k := in.stats.Steps
	s.computed += int(k)
	s.Generated += int(k)
	s.Acct[AcctCompute] += in.busyNs
	s.Acct[AcctQueue] += in.lastEndNs - in.busyNs
	s.markNs, s.LastTokenNs = in.lastEndNs, in.lastEndNs
	in.settleSliding(s)
	if in.cfg.PrefixCaching { // commitFull, with every shared block long committed
		s.committed = max(s.committed, s.computed/in.cfg.BlockSize)
	}
}

// settleFrom settles every running sequence from position pos on.
func (in *Instance) settleFrom(pos int) {
	for i := pos; i < len(in.running) && in.cruising > 0; i++ {
		in.settle(i)
	}
}

// planCruising adds the cruising sequences, one decode token each, to the
// batch of step k.
func (in *Instance) planCruising(k int64) {
	if in.cruising == 0 {
		return
	}
	// Each one's context is its relative computed + k−1 tokens, plus the
	// one it computes now.
	in.batch.DecodeSeqs += in.cruising
	in.batch.DecodeContext += in.cruiseBase + int64(in.cruising)*k
}

// completeCruising applies the step ending at nowNs to the cruising
// sequences: one token each, all sampled one step after their previous one.
func (in *Instance) completeCruising(nowNs int64) {
	if in.cruising == 0 {
		return
	}
	in.res.SteadyTokens = in.cruising
	in.res.SteadyGapNs = nowNs - in.lastEndNs
	in.stats.DecodeTokens += int64(in.cruising)
}
