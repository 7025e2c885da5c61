package engine

import (
	"fmt"

	"handoff/models/kv"
	"handoff/models/perf"
)

// Instance is one engine replica: its queues, its KV pool and the plan of the
// step in flight.
type Instance struct {
	cfg     Config
	pool    *kv.Pool
	waiting deque
	ready   deque // decode role: prompt KV arrived; they hold their blocks (empty with SharedQueue)
	skipped deque // SharedQueue: pulling sequences passed over in the admission pass under way
	swapped deque // swap policy: preempted to the host tier, oldest first
	running []*Seq
	// due[i] is 0 unless running[i] cruises (cruise.go); then it is the
	// number of the first step in which it needs attention. finishedEntry
	// marks one that finished in the step just completed, until
	// removeFinished drops it. phase[i] is the phase of its block
	// boundaries (noPhase: none counted), trip[i] the rest of a cruise's
	// state.
	due     []int64
	phase   []int16
	trip    []trip
	victims int // sequences preempted and not yet recovered nor rejected
	pulling int // decode role: sequences whose prompt KV is in flight
	holding int // prefill role: finished sequences holding blocks

	step         []stepEntry // sequences computing in the step in flight, cruising ones aside
	batch        perf.Batch
	inStep       bool // a step is in flight; with Stages > 1, as many micro-batches as stages (pipeline.go)
	res          StepResult
	freeSeqs     []*Seq
	stats        Stats
	segs         []kv.Segment   // scratch: a named-output sequence's content (output.go)
	clockNs      int64          // the time of the current Schedule or Complete (tiers' writes)
	evicted      []tierEviction // scratch: blocks on their way down the tiers (tiers.go)
	scratch      []uint64       // scratch: hashes a host tier evicted for swap room
	freshScratch []int32        // scratch: blocks a tier write finds missing (tiers.go)
	keyScratch   []uint64       // scratch: a hybrid model's tier entries to write (tiergroups.go)

	mem memory // the paged pool or the slots (memory.go)

	// The scheduling policy (sched.go), how many sequences were enqueued
	// (the next one's Seq.order), and whether admissions since the last
	// pass left the running set out of the policy's order.
	sched    schedPolicy
	ordered  bool // sched.ordersRunning()
	enqueues int64
	unsorted bool

	// Deferred frees (deferred.go): departed sequences' blocks held back,
	// how many, tables to reuse, and the last step processed as of the
	// pass under way.
	deferred       []deferredFree
	deferredBlocks int
	spare          [][]kv.BlockID
	processed      int64

	// The running sequences the pass under way left out of its step (the
	// budget ran out, or a fenced victim stopped it): positions cut to
	// cutEnd (Rules.ReserveInflight counts their prefills).
	cut, cutEnd int

	// Why queued sequences wait (waits.go): the time spent in each cause
	// so far, the cause since waitSince, and why the pass under way
	// stopped admitting.
	waitNs    Waits
	waitCause WaitCause
	waitSince int64
	stop      WaitCause

	// Cruising sequences (cruise.go).
	cruising   int         // how many
	cruiseBase int64       // Σ of their relative computed
	phaseCount []int32     // by phase, how many cross their block boundaries by phase
	nextDue    int64       // no cruising sequence is due before this step (a lower bound)
	cruiseNext []stepEntry // sampled their first token in the last step: cruise from the next pass
	busyNs     int64       // Σ durations of the steps completed
	lastEndNs  int64       // end of the last step completed
	lastStart  int64       // start of the last step completed
	cutoffNs   int64       // Schedule admits only sequences enqueued by then (AsyncScheduling)
	noCruise   bool        // every sequence scheduled eagerly: tests, and speculative decoding (spec.go)
	lostStep   bool        // Drop is taking sequences off while a step is in flight (crash.go)

	steadyShort int64 // tests: steps not steady only for want of their phase's blocks

	// SGLang's new-token ratio and the tokens its admission pass counts
	// as taken (sglang.go); TensorRT-LLM's blocks reserved for the running
	// sequences to complete (trtllm.go).
	ratio      float64
	ratioTaken float64
	reserved   int

	// Pipeline parallelism (pipeline.go), kept apart from the fields every
	// step reads: the micro-batches in flight, oldest first, and their
	// entry slices for reuse.
	flights      []microBatch
	spareFlights []microBatch
}

// Stats are an instance's cumulative counters.
type Stats struct {
	Steps            int64
	SteadySteps      int64 // of those, planned without a pass over the running set (schedule.go's steady); 0 when Eager
	PrefillTokens    int64 // prompt tokens computed (including re-prefill)
	ReprefillTokens  int64 // tokens recomputed after a preemption
	DecodeTokens     int64 // tokens produced by decode sequences
	Preemptions      int64
	PrefixHitTokens  int64 // prompt tokens served from the prefix cache
	PromptTokensSeen int64 // prompt tokens of admitted sequences
	SwapOuts         int64 // preemptions that went to the host tier
	SwappedBlocks    int64 // blocks copied out and back in
	Rejections       int64 // sequences rejected (low cache hit, or no slot under the reject pressure policy)
	Recompiles       int64 // slot mode: recompile pauses

	TierHitBlocks     [NumTiers]int64 // blocks onboarded from each lower tier
	TierWrittenBlocks [NumTiers]int64 // blocks written to each lower tier
	Waits             Waits           // queued sequences' waits by cause (waits.go), summed
	Spec              SpecStats       // speculative decoding's drafts and accepted tokens (spec.go)
}

// StepResult is what one step (or one scheduling pass) produced. Its slices
// are reused by the next call; copy what must outlive it.
type StepResult struct {
	FirstTokens []*Seq  // produced their first token on this instance
	Finished    []*Seq  // generated their last token here
	Preempted   []*Seq  // preempted while planning the step
	Pulls       []*Seq  // decode role: blocks reserved, start the KV transfer now (and its Onboard reads)
	Onboards    []*Seq  // blocks reserved for their lower-tier hit (Seq.Onboard): time the copies, then Onboarded
	Rejected    []*Seq  // reject policy: refused on re-admission; they hold nothing and are done here
	FinalChunks []*Seq  // prefill role: computing their last prompt tokens in this step (layer-wise streaming may start)
	Recovered   []*Seq  // finished recomputing their context, or swapped back in
	TokenGapsNs []int64 // inter-token gaps of non-first tokens produced by the step, but for:
	// SteadyTokens more tokens, each SteadyGapNs after its sequence's previous
	// one: those of the cruising sequences (see cruise.go).
	SteadyTokens int
	SteadyGapNs  int64
	// DraftedTokens more tokens are accepted drafts (spec.go), each
	// delivered with the token its sequence sampled in the step: no gap.
	DraftedTokens int
}

// New returns an instance with an empty pool. cfg must have passed Validate.
func New(cfg Config) *Instance {
	in := &Instance{cfg: cfg, pool: kv.NewPool(cfg.NumBlocks, cfg.BlockSize, cfg.PrefixCaching)}
	sched, err := lookupSched(cfg.Scheduling)
	if err != nil {
		panic("engine: " + err.Error()) // Validate refuses it
	}
	in.sched, in.ordered = sched, sched.ordersRunning()
	if len(cfg.Tiers) > 0 {
		in.pool.LogEvictions()
	}
	in.noCruise = cfg.Spec.Tokens > 0 // a step yields a drawn number of tokens: cruise.go counts one
	if cfg.slotMode() {
		in.mem = newSlots(in)
	} else {
		in.mem = &paged{in: in}
	}
	in.noCruise = in.noCruise || cfg.Stages > 1 // a sequence sits out the micro-batches it is in flight for
	// SGLang's and TensorRT-LLM's admission read every running sequence's
	// remaining output, which a cruising sequence does not keep current.
	in.noCruise = in.noCruise || cfg.Admission >= NewTokenRatio || cfg.Retract
	if cfg.Admission == NewTokenRatio {
		in.ratio = sglInitRatio
	}
	return in
}

// Eager makes the instance plan every step the general way, visiting every
// sequence: none cruises and no step is steady (cruise.go). Results are
// the same either way; tests run an eager instance beside the default one
// to show it.
func (in *Instance) Eager() { in.noCruise = true }

// Config returns the instance's configuration.
func (in *Instance) Config() Config { return in.cfg }

// Pool exposes the KV pool for inspection (tests, metrics, router views).
func (in *Instance) Pool() *kv.Pool { return in.pool }

// Stats returns the cumulative counters.
func (in *Instance) Stats() Stats { return in.stats }

// Waiting is the number of sequences queued for admission (swapped-out
// ones included).
func (in *Instance) Waiting() int {
	n := in.waiting.len() + in.ready.len() + in.swapped.len()
	if in.cfg.SharedQueue {
		n -= in.pulling // they wait in the waiting queue
	}
	return n
}

// HostBlocksUsed is the number of host-tier blocks holding swapped-out KV
// (not those caching blocks in a host Tier).
func (in *Instance) HostBlocksUsed() int { return in.mem.hostBlocks() }

// Victims is the number of preempted sequences that have neither recovered
// (recomputed their context, or been swapped back in) nor been rejected:
// a sequence preempted again while recovering counts once. A preemption
// chain (a cascade) lasts while it is positive.
func (in *Instance) Victims() int { return in.victims }

// markVictim counts a sequence just preempted as a victim, once.
func (in *Instance) markVictim(s *Seq) {
	if !s.victim {
		s.victim = true
		in.victims++
	}
}

// unmarkVictim ends a victim's recovery (recovered or rejected).
func (in *Instance) unmarkVictim(s *Seq) {
	if s.victim {
		s.victim = false
		in.victims--
	}
}

// Running is the number of sequences in the running set.
func (in *Instance) Running() int { return len(in.running) }

// Pulling is the number of sequences waiting for remote KV.
func (in *Instance) Pulling() int { return in.pulling }

// Holding is the number of finished sequences still holding blocks.
func (in *Instance) Holding() int { return in.holding }

// Busy reports whether a step is in flight: with pipeline parallelism
// (Config.Stages > 1), whether as many micro-batches are in flight as
// there are stages, so that nothing may be planned until one completes.
func (in *Instance) Busy() bool { return in.inStep }

// Idle reports whether the instance has nothing queued, running or pending.
func (in *Instance) Idle() bool {
	return in.Waiting() == 0 && len(in.running) == 0 && in.pulling == 0 && in.holding == 0
}

// NewSeq returns a cleared sequence, reusing a recycled one when possible.
func (in *Instance) NewSeq() *Seq {
	if n := len(in.freeSeqs); n > 0 {
		s := in.freeSeqs[n-1]
		in.freeSeqs = in.freeSeqs[:n-1]
		return s
	}
	return &Seq{}
}

// Recycle returns a finished sequence for reuse. The caller must hold no
// reference to it afterwards.
func (in *Instance) Recycle(s *Seq) {
	if s.state != stateDone && s.state != stateNew {
		panic("engine: recycling a live sequence")
	}
	s.reset()
	in.freeSeqs = append(in.freeSeqs, s)
}

// Enqueue adds a sequence to the back of the waiting queue at nowNs. Its
// Prefix segments must not be longer than its prompt.
func (in *Instance) Enqueue(s *Seq, nowNs int64) {
	if s.MaxNew < 1 || s.PromptTokens < 1 {
		panic("engine: sequence needs a prompt and at least one token to generate")
	}
	prefix := 0
	for _, seg := range s.Prefix {
		prefix += seg.Tokens
	}
	if prefix > s.PromptTokens {
		panic("engine: prefix segments longer than the prompt")
	}
	s.shared = prefix / in.cfg.BlockSize
	s.namedOut = s.Output.ID != 0 && s.Output.Tokens > 0 && prefix == s.PromptTokens
	s.markNs = nowNs
	s.state = stateWaiting
	s.order = in.enqueues
	in.enqueues++
	in.sched.enqueue(&in.waiting, s)
	in.joinQueue(s, nowNs)
}

// Release frees the blocks of a finished prefill-role sequence once its KV
// has been transferred.
func (in *Instance) Release(s *Seq) {
	if s.state != stateHolding {
		panic(fmt.Sprintf("engine: releasing a sequence in state %d that holds nothing", s.state))
	}
	in.mem.release(s)
	s.state = stateDone
	in.holding--
}

// KVLost turns a pulling sequence whose remote KV will never come (the
// prefill instance freed it) into a local prefill: it keeps the blocks it
// reserved, joins the ready queue, and computes its prompt past its own
// prefix-cache hit here. (A hybrid model's sliding-window groups keep the
// prompt's last window they reserved, no more, while it does.)
func (in *Instance) KVLost(s *Seq, nowNs int64) {
	if s.state != statePulling {
		panic("engine: KV lost for a sequence that is not pulling")
	}
	in.pulling--
	s.markNs = nowNs
	s.computed = s.committed * in.cfg.BlockSize
	in.readyUp(s)
	in.joinQueue(s, nowNs)
}

// KVArrived marks a pulling sequence's prompt KV as present: it joins the
// ready queue with every prompt token but the last computed, so its first
// step recomputes that token and samples the first output token (as vLLM's
// decode side does after a remote prefill). Ready sequences are admitted
// before the waiting queue, as vLLM's scheduler serves its skipped_waiting
// queue first under FCFS (vllm/v1/core/sched/scheduler.py,
// _select_waiting_queue_for_scheduling): they already hold their blocks,
// and making them wait behind a head that cannot get blocks can deadlock a
// decoder whose blocks they are — which Config.SharedQueue, the order of
// earlier vLLM releases, lets happen.
func (in *Instance) KVArrived(s *Seq, nowNs int64) {
	if s.state != statePulling {
		panic("engine: KV arrived for a sequence that is not pulling")
	}
	in.pulling--
	s.markNs = nowNs
	s.computed = s.PromptTokens - 1
	in.commitFull(s)
	in.readyUp(s)
	in.joinQueue(s, nowNs)
}

// readyUp makes a sequence that holds its blocks admissible: it joins the
// ready queue, or, with SharedQueue, waits where it stands in the waiting
// queue.
func (in *Instance) readyUp(s *Seq) {
	s.state = stateWaiting
	if !in.cfg.SharedQueue {
		in.sched.enqueue(&in.ready, s)
	}
}
