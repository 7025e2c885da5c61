package engine

import "handoff/models/kv"

// seqState is where a sequence is in its life on one instance.
type seqState uint8

const (
	stateNew     seqState = iota // enqueued, never admitted
	stateWaiting                 // in the waiting queue (new, preempted or KV arrived)
	stateRunning                 // in the running set
	statePulling                 // blocks reserved, prompt KV in flight (decode role) or copied up from a lower tier
	stateHolding                 // prefill role: finished, blocks held until released
	stateSwapped                 // swapped out to the host tier
	stateDone                    // finished or rejected; blocks freed
)

// Seq is one request's state on one instance. The caller fills the exported
// fields before Enqueue and reads the counters of the sequences a StepResult
// hands out (a cruising sequence's counters are not current, see
// cruise.go); the engine owns the rest. Seqs are recycled through
// Instance.NewSeq and Instance.Recycle.
type Seq struct {
	// What a step or a settling cruise reads and writes: the first two
	// cache lines (a Seq is a multiple of 64 bytes, so allocations keep
	// them aligned). While the sequence cruises, computed and Generated
	// are kept relative to its instance's step count and Acct to its busy
	// time (see cruise.go).
	computed     int   // tokens whose KV is in the pool
	committed    int   // leading blocks already committed to the prefix cache
	shared       int   // leading blocks made only of Prefix tokens: shareable with other sequences
	PromptTokens int   // tokens in the prompt
	Generated    int   // tokens generated on this instance so far
	MaxNew       int   // tokens to generate on this instance, ≥ 1
	markNs       int64 // time its accounting has reached
	LastTokenNs  int64 // when the last token was produced
	state        seqState
	reprefill    bool
	swappedIn    bool  // swapped back in for the coming step
	Hold         bool  // keep blocks after finishing until Release (prefill role)
	skipped      int32 // hybrid models: leading blocks of its sliding-window tables that slid out (sliding.go)
	Acct         Acct  // where its time here went
	blocks       []kv.BlockID

	Ref      int32        // caller's handle, opaque to the engine
	Prefix   []kv.Segment // prompt content identity (prefix caching)
	UniqueID uint64       // identity of tokens past Prefix and of generated tokens
	Remote   bool         // prompt KV arrives by transfer (decode role)

	// Output, when its ID is not 0 and Prefix covers the whole prompt, is
	// the content identity of the generated tokens: output token k is
	// (Output.ID, k), so a later prompt that repeats [Prefix…, Output]
	// finds this sequence's full output blocks in the prefix cache once it
	// finishes here (outputBlocks). Zero: they are unique (UniqueID).
	Output kv.Segment

	CachedTokens int // prompt tokens found in the prefix cache at first admission
	Preemptions  int // times preempted on this instance
	RemoteTokens int // decode role: prompt tokens to pull (prompt minus local prefix hits)
	SwapOuts     int // times swapped out to the host tier

	// CacheHitThreshold, under the reject policy, is the least share of its
	// context a preempted sequence must find in the prefix cache when it is
	// re-admitted; below it the sequence is rejected (vLLM RFC #24256).
	CacheHitThreshold float64

	// AdmitHitThreshold is the least share of its prompt a sequence must
	// find cached (in HBM or a lower tier) at its first admission; below
	// it the sequence is refused, as a vLLM implementing the request field
	// cache_hit_threshold (RFC #24256, PR #24520) finishes it with reason
	// cache_threshold. 0: none.
	AdmitHitThreshold float64

	// Onboard is how many blocks its last onboard read from each lower
	// tier (tiers.go), readable from OnboardReadyNs — for a hybrid model,
	// blocks of every KV cache group, OnboardSliding of them the
	// sliding-window groups' (tiergroups.go); OnboardNs is the time it has
	// waited for onboards here (Instance.Onboarded), which its caller may
	// take.
	Onboard        [NumTiers]int32
	OnboardReadyNs int64
	OnboardNs      int64

	// Wait is what it waited in the queues here, by cause (waits.go).
	Wait     Waits
	waitSnap Waits // the instance's wait totals when it joined the queue

	lastStep   int64 // the last step it was planned into, but while it cruises (deferred frees: rules.go)
	onboarding int32 // blocks being copied up from lower tiers
	// Priority is its class's priority under the priority scheduling
	// policy (sched_priority.go): a lower value is served first, as
	// vLLM's.
	Priority   int32
	inflight   int32 // tokens planned into micro-batches still in flight (pipeline.go)
	hostBlocks int   // blocks it holds in the host tier while swapped out
	slotClass  int   // slot mode: the class of the slot it holds
	admitted   bool
	victim     bool // preempted and not yet recovered nor rejected (Instance.Victims)
	namedOut   bool // Output identifies its generated tokens (set by Enqueue)
	hashes     []uint64
	stale      []kv.BlockID // blocks held before a preemption: the private ones may still be cached

	OnboardSliding [NumTiers]int16 // see Onboard
	order          int64           // its place in arrival order here (Enqueue; sched_priority.go)

	_ [seqPad]byte
}

// seqPad rounds a Seq up to a whole number of cache lines (TestSeqLayout).
const seqPad = 62

// Tokens is the sequence's context: prompt plus every token generated here.
func (s *Seq) Tokens() int { return s.PromptTokens + s.Generated }

// Recovering reports whether s was preempted and has not yet recovered
// (re-prefilled or swapped back in).
func (s *Seq) Recovering() bool { return s.victim }

// Finished reports whether the sequence has generated all it will here.
func (s *Seq) Finished() bool { return s.state == stateHolding || s.state == stateDone }

// Blocks is the number of KV blocks in the sequence's table (for a hybrid
// model, its full-attention group's: see Instance.SeqBlocks); a cruising
// sequence may hold more (see Instance.UncountedBlocks).
func (s *Seq) Blocks() int { return len(s.blocks) }

// reset clears the sequence for reuse, keeping slice capacity.
func (s *Seq) reset() {
	blocks, hashes, stale := s.blocks[:0], s.hashes[:0], s.stale[:0]
	*s = Seq{blocks: blocks, hashes: hashes, stale: stale}
}
