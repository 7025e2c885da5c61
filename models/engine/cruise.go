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
// last-token step. Its block boundaries recur every BlockSize steps, so
// they are a phase, not a due: the step numbers k with k mod BlockSize
// equal to it. The instance counts its cruising sequences per phase, and
// step k takes as many blocks as phase k mod BlockSize counts, from the
// pool as mere counts (kv.Pool.AllocateAnonymous: the free queue changes
// exactly as with Allocate), without touching them; a sequence works out
// at settling how many boundaries it crossed since it began (crossings).
// (A sequence whose first boundary is more than a block away takes it
// through its due and joins its phase then; a hybrid model's sequences
// keep every boundary and slide as dues, sliding.go.) Otherwise nothing
// about a cruising sequence is read or written. The instance keeps
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

// A step in which every running sequence cruises and none is due but for
// its last token is steady (schedule.go's steady): its running set costs
// the blocks of one phase, as one count, and O(1) more, whatever the
// number running; admission follows as usual.

// noPhase marks a running sequence whose block boundaries are not counted
// by phase (it does not cruise, or takes its boundaries as dues).
const noPhase = -1

// trip is what the instance keeps of one cruise besides its due step and
// phase.
type trip struct {
	lastStep int64 // the step producing its last token here
	// from is the step after which its phase counts: it crosses a block
	// boundary in every later step k with k mod BlockSize = its phase.
	from  int64
	grown int32 // blocks its table took through dues while cruising, held as a count (kv.Pool.AllocateAnonymous)
	// slideBack, for a hybrid model, places the next step whose token
	// makes its window drop a block: lastStep − slideBack; ≤ 0: none before
	// lastStep (sliding.go).
	slideBack int32
}

// addRunning appends s to the running set and returns its position.
func (in *Instance) addRunning(s *Seq) int {
	if n := len(in.running); in.ordered && n > 0 && before(s, in.running[n-1]) {
		in.unsorted = true // sortRunning, before the next pass
	}
	in.running = append(in.running, s)
	in.due = append(in.due, 0)
	in.phase = append(in.phase, noPhase)
	in.trip = append(in.trip, trip{})
	return len(in.running) - 1
}

// crossings is how many steps after from, up to and including to, cross
// the block boundary of phase p.
func (in *Instance) crossings(from, to int64, p int16) int {
	b := int64(in.cfg.BlockSize)
	return int(floorDiv(to-int64(p), b) - floorDiv(from-int64(p), b))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// phaseOf is the phase of the block boundaries step k crosses.
func (in *Instance) phaseOf(k int64) int16 {
	b := int64(in.cfg.BlockSize)
	if b&(b-1) == 0 {
		return int16(k & (b - 1)) // the usual power of two, without a division
	}
	return int16(k % b)
}

// joinPhase counts the cruising sequence at pos in phase p from step from on.
func (in *Instance) joinPhase(pos int, p int16, from int64) {
	if in.phaseCount == nil {
		in.phaseCount = make([]int32, in.cfg.BlockSize)
	}
	in.phase[pos], in.trip[pos].from = p, from
	in.phaseCount[p]++
}

// UncountedBlocks is how many blocks are held back for departed sequences
// (deferred.go) plus how many cruising sequences hold beyond their
// SeqBlocks (taken while cruising, added to their tables when they settle,
// less the sliding-window blocks they dropped): with those, the sequences'
// blocks add up to the pool's references. Cost O(running): for audits.
func (in *Instance) UncountedBlocks() int {
	n := in.deferredBlocks
	for i, t := range in.trip {
		n += int(t.grown) * (1 + in.cfg.SlidingGroups)
		if p := in.phase[i]; p != noPhase {
			n += in.crossings(t.from, in.stats.Steps, p)
		}
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
	in.running, in.due, in.phase, in.trip = in.running[:last], in.due[:last], in.phase[:last], in.trip[:last]
	return s
}

// growCruising gives the cruising sequence at position pos, due at step
// k only because its token needs a new block, that block — as a count, so
// the sequence itself is not touched — and keeps it cruising, its later
// boundaries counted by phase. It reports false, changing nothing, when
// no block is free.
func (in *Instance) growCruising(pos int, k int64) bool {
	if in.cfg.SlidingGroups > 0 {
		return in.crossSliding(pos, k)
	}
	if !in.pool.AllocateAnonymous(1) {
		return false
	}
	t := &in.trip[pos]
	t.grown++
	in.due[pos] = t.lastStep
	in.joinPhase(pos, in.phaseOf(k), k)
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
	boundary := k + int64(in.mem.room(s)) + 1
	due, phased := last, false
	var slideBack int32
	switch {
	case in.cfg.SlidingGroups > 0:
		slide := in.firstSlide(s, k)
		due = min(last, boundary, slide)
		slideBack = int32(max(0, last-slide))
	case boundary >= last: // no boundary before its last step
	case boundary <= k+int64(in.cfg.BlockSize):
		phased = true
	default: // its first boundary is more than a block away
		due = boundary
	}
	if due <= k+1 {
		return
	}
	in.due[pos] = due
	in.trip[pos] = trip{lastStep: last, slideBack: slideBack}
	if phased {
		in.joinPhase(pos, in.phaseOf(boundary), k)
	}
	in.nextDue = min(in.nextDue, due)
	s.computed -= int(k)
	s.Generated -= int(k)
	s.Acct[AcctCompute] -= in.busyNs
	s.Acct[AcctQueue] += in.busyNs - s.markNs
	in.cruising++
	in.cruiseBase += int64(s.computed)
}

// startCruises lets the sequences that sampled their first token in the
// last step cruise, as maybeCruise would have then: nothing about them or
// the instance's step count and busy time has changed since, unless they
// left the running set (aborted, dropped) or were settled and moved
// (a preemption ahead of them in a pass), in which case they are left to
// cruise later.
func (in *Instance) startCruises() {
	for _, e := range in.cruiseNext {
		if pos := int(e.pos); pos < len(in.running) && in.running[pos] == e.s && in.due[pos] == 0 {
			in.maybeCruise(pos, e.s)
		}
	}
	clear(in.cruiseNext)
	in.cruiseNext = in.cruiseNext[:0]
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
	t := &in.trip[pos]
	if p := in.phase[pos]; p != noPhase {
		t.grown += int32(in.crossings(t.from, in.stats.Steps, p))
		in.phaseCount[p]--
		in.phase[pos] = noPhase
	}
	if t.grown > 0 {
		s.blocks = in.pool.Claim(s.blocks, int(t.grown))
		t.grown = 0
	}
	in.cruising--
	in.cruiseBase -= int64(s.computed)
	k, lost := in.stats.Steps, 0 // its blocks cover the step planned; its tokens, those completed
	if in.lostStep {
		k, lost = k-1, 1
	}
	s.computed += int(k)
	s.Generated += int(k)
	s.lastStep = k
	s.Acct[AcctCompute] += in.busyNs
	s.Acct[AcctQueue] += in.lastEndNs - in.busyNs
	s.markNs, s.LastTokenNs = in.lastEndNs, in.lastEndNs
	in.settleSliding(s, s.computed+lost)
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
