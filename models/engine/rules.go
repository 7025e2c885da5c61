package engine

// Rules are the scheduling rules that differ between engines (kinds.go)
// and their releases, and decide whether an instance under KV pressure
// makes progress: what a waiting sequence must find free to be admitted, in
// which queue a sequence waiting for remote KV waits, which blocks an
// async load may not take, when a departing sequence's blocks come free
// and what the running pass does when they have not. An Instance consults
// them at those points only; a release is a named preset of them
// (releases.go), and each rule can also be set on its own.
//
// The zero value admits on the first chunk, reserves nothing and frees at
// once, with today's separate queue for remote KV.
type Rules struct {
	// Admission is what a waiting sequence must find free.
	Admission Admission

	// SharedQueue keeps decode-role sequences that wait for remote KV, or
	// whose KV has arrived, in the waiting queue with everything else, as
	// vLLM's scheduler did before it kept such requests in a queue of
	// their own (skipped_waiting, PR #35781, v0.18) served first. A
	// preempted sequence at the head that cannot get its blocks then stops
	// admission before the sequences behind it that hold theirs, and a
	// decoder can deadlock. False is today's vLLM: sequences whose KV
	// arrived are admitted first (see Instance.KVArrived).
	SharedQueue bool

	// ReserveInflight bars an async load — a remote-KV pull, or an
	// onboard from a lower tier — from the blocks the prefills in flight
	// still need to reach their whole sequence: it is admitted only if its
	// blocks fit in the free blocks less that reservation (vLLM PR #44560,
	// v0.23: Scheduler._inflight_prefill_reserved_blocks). A load holds its
	// blocks with no progress and cannot be preempted; without the
	// reservation, loads can take the room a running prefill needs to
	// finish, which then preempts the decodes around it and itself.
	ReserveInflight bool

	// DeferFrees returns a departing sequence's blocks (preempted,
	// finished or aborted) to the pool only once the step it was last
	// scheduled in has ended (vLLM PR #45357, v0.24: deferred_frees fenced
	// by sched_step_seq). It applies where the configuration makes vLLM
	// defer: with asynchronous scheduling on a KV consumer — a decode
	// instance, or one with lower KV tiers (Config.defersFrees). Under
	// asynchronous scheduling the step planned next runs beside the last
	// one, so a victim's blocks are not free for the rest of the pass
	// that preempted it.
	DeferFrees bool

	// FencedVictim is what the running pass does when the victim it
	// picks has its free deferred: preempting it frees nothing now.
	FencedVictim FencedVictim

	// WatermarkBlocks are kept free by admission while any sequence runs
	// (vLLM's SchedulerConfig.watermark, PR #44594, v0.24, default 0: a
	// share of the pool's blocks): a waiting sequence is admitted only if
	// its blocks and the watermark fit.
	WatermarkBlocks int

	// Retract is SGLang's answer to a decode that runs out of memory
	// (sglang.go): before the step, decoding sequences are retracted,
	// fewest generated tokens first, until the rest have room for a few
	// steps; each loses the KV of its generated tokens, rejoins the back of
	// the waiting queue, and the new-token ratio is raised. False: vLLM's
	// preemption of the last admitted when an allocation fails (which is
	// also TensorRT-LLM's MAX_UTILIZATION pause, trtllm.go).
	Retract bool
}

// Admission is what a waiting sequence must find free to be admitted.
type Admission uint8

// The admission rules.
const (
	// FirstChunk admits a sequence whose next chunk fits: vLLM before
	// v0.19. A long sequence is admitted on its first chunk and may run
	// out of room before its last, preempting the decodes around it and
	// at last itself.
	FirstChunk Admission = iota
	// FullSequence admits a sequence only if its whole context fits
	// (prompt and every token it generated, less its prefix-cache hit):
	// vLLM's scheduler_reserve_full_isl, default since v0.19 (PR #37307;
	// KVCacheManager.allocate_slots with full_sequence_must_fit). A
	// head that does not fit stops admission until it does.
	FullSequence
	// NewTokenRatio is SGLang's PrefillAdder (sglang.go): a sequence is
	// admitted if its uncached tokens and its remaining output fit in the
	// free tokens less what the running sequences are expected to still
	// generate, their remaining output scaled by the new-token ratio.
	NewTokenRatio
	// ReserveOutput is TensorRT-LLM's GUARANTEED_NO_EVICT (trtllm.go): a
	// sequence is admitted only if the blocks of its whole prompt and
	// output fit beside the blocks every running sequence still needs to
	// complete, so a running sequence never runs out.
	ReserveOutput
)

// admissionNames are the admission rules' names, indexed by Admission.
var admissionNames = [...]string{"first_chunk", "full_sequence", "new_token_ratio", "reserve_output"}

// String names the rule as scenarios do.
func (a Admission) String() string { return admissionNames[a] }

// FencedVictim is what the running pass does when the victim it picks
// has its free deferred (Rules.DeferFrees).
type FencedVictim uint8

// The fenced-victim rules.
const (
	// Cascade preempts it and, the allocation still failing, the next
	// victim, until the sequence that needed the block preempts itself:
	// one failed allocation preempts the tail of the running set and
	// gains nothing this step — the zero-progress preemption cascade of
	// vLLM v0.24 to v0.29 (issue #49674).
	Cascade FencedVictim = iota
	// Wait preempts nobody: the sequence that needed the block, and those
	// after it, sit this step out, and the allocation is retried next
	// step, when the fence has passed (vLLM PR #49675, v0.30).
	Wait
)

// String names the rule as scenarios do.
func (f FencedVictim) String() string { return [...]string{"cascade", "wait"}[f] }
