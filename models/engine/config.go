package engine

import "fmt"

// Policy is what an instance does to a running sequence when it needs a KV
// block and none is free.
type Policy uint8

// The preemption policies.
const (
	Recompute Policy = iota // vLLM V1: free its blocks; re-prefill prompt + output later
	Swap                    // vLLM V0: copy its blocks to the host tier; copy back later
	Reject                  // vLLM RFC #24256: as Recompute, but on re-admission a sequence whose cache hit is below its threshold is rejected
)

// String names the policy as scenarios do.
func (p Policy) String() string { return [...]string{"recompute", "swap", "reject"}[p] }

// Config is the engine's fixed configuration (vLLM's scheduler and cache
// settings). Validate fills defaults and rejects impossible values.
type Config struct {
	MaxBatchedTokens int  // token budget per step (max_num_batched_tokens)
	MaxSeqs          int  // running sequences cap (max_num_seqs)
	BlockSize        int  // tokens per KV block
	NumBlocks        int  // KV blocks in the pool (per TP shard; all shards alike)
	MaxModelLen      int  // longest context a sequence may reach, tokens
	PrefixCaching    bool // share full blocks through chained hashes
	NoChunkedPrefill bool // admit a prefill only if it fits the budget whole
	Preemption       Policy
	// Scheduling is the scheduling policy (sched.go): fcfs (""), or
	// priority, ordering by Seq.Priority (vLLM's --scheduling-policy).
	Scheduling string
	HostBlocks int // swap: blocks the host tier holds (0: swap falls back to recompute), without a host Tier

	// Tiers are the lower KV tiers below HBM, in order host → disk →
	// store (tiers.go); empty: none.
	Tiers []*Tier

	// Hybrid attention (vLLM's hybrid KV cache manager, sliding.go): each
	// block holds one KV cache group's layers; a sequence's table is its
	// full-attention group's, and SlidingGroups sliding-window groups of
	// SlidingWindow tokens each hold only the blocks their window reaches.
	// Zero: every layer attends to the whole context.
	SlidingWindow int
	SlidingGroups int

	// Rules are the scheduling rules that differ between engine releases
	// (rules.go); the zero value is vLLM v0.10's.
	Rules

	// KVConsumer: the instance receives KV through a connector — a
	// decode instance, or one with lower KV tiers — which is where vLLM
	// defers frees (Rules.DeferFrees) under asynchronous scheduling.
	KVConsumer bool

	// AsyncScheduling is vLLM V1's asynchronous scheduling (PR #19970,
	// behind --async-scheduling from v0.10; on by default since v0.14, PR
	// #27614): the engine core schedules step k+1
	// as soon as it has launched step k, before step k's outputs are back
	// (vllm/v1/engine/core.py, step_with_batch_queue, two batches in
	// flight; vllm/v1/core/sched/async_scheduler.py). A request that
	// reaches the engine while step k runs therefore joins step k+2, one
	// step later than with synchronous scheduling. When nothing else would
	// run, it joins the next step (the engine is idle, not pipelined).
	AsyncScheduling bool

	// Stages is the instance's pipeline-parallel stages: with more than
	// one, up to Stages micro-batches are in flight at once (pipeline.go).
	// 0 or 1: one step at a time. It excludes AsyncScheduling and slots.
	Stages int

	// Slot mode (wafer-scale decoders): compiled layouts of sequence slots
	// instead of a paged pool. Layouts[0] is the first; recompiling moves to
	// another after RecompileNs. Empty: paged mode.
	Layouts     [][]SlotClass
	Pressure    Pressure
	RecompileNs int64

	// Spec is speculative decoding (spec.go); zero: none.
	Spec Speculative
}

// Validate fills defaults (block size 16) and checks the limits.
func (c *Config) Validate() error {
	if c.BlockSize == 0 {
		c.BlockSize = 16
	}
	if c.slotMode() {
		if err := c.validateSlots(); err != nil {
			return err
		}
		c.NumBlocks, c.PrefixCaching = c.maxSlots(), false
	}
	switch {
	case c.MaxBatchedTokens <= 0:
		return fmt.Errorf("max_num_batched_tokens must be positive, got %d", c.MaxBatchedTokens)
	case c.MaxSeqs <= 0:
		return fmt.Errorf("max_num_seqs must be positive, got %d", c.MaxSeqs)
	case c.BlockSize < 0:
		return fmt.Errorf("block_size must be positive, got %d", c.BlockSize)
	case c.NumBlocks <= 0:
		return fmt.Errorf("KV pool has %d blocks: no room for any KV cache", c.NumBlocks)
	case c.MaxModelLen <= 0:
		return fmt.Errorf("max_model_len must be positive, got %d", c.MaxModelLen)
	case c.WatermarkBlocks < 0 || c.WatermarkBlocks >= c.NumBlocks:
		return fmt.Errorf("watermark of %d blocks: want at least 0 and fewer than the pool's %d", c.WatermarkBlocks, c.NumBlocks)
	case c.HostBlocks < 0:
		return fmt.Errorf("host tier must not be negative, got %d blocks", c.HostBlocks)
	case c.SlidingWindow < 0 || c.SlidingGroups < 0 || (c.SlidingWindow > 0) != (c.SlidingGroups > 0):
		return fmt.Errorf("sliding window %d tokens over %d KV cache groups: want both positive or both 0",
			c.SlidingWindow, c.SlidingGroups)
	case (c.Admission >= NewTokenRatio || c.Retract) && c.slotMode():
		return fmt.Errorf("admission %s or retraction needs a paged pool: slots are a wafer's own runtime", c.Admission)
	case c.SlidingGroups > 0 && c.slotMode():
		return fmt.Errorf("sliding-window KV cache groups need a paged pool, not slots")
	case c.validateSched() != nil:
		return c.validateSched()
	case c.Stages < 0:
		return fmt.Errorf("pipeline stages must not be negative, got %d", c.Stages)
	case c.Stages > 1 && c.Spec.Tokens > 0:
		return fmt.Errorf("pipeline stages (%d) with speculative decoding: not modelled", c.Stages)
	case c.Stages > 1 && (c.AsyncScheduling || c.slotMode()):
		return fmt.Errorf("pipeline stages (%d) with asynchronous scheduling or slots: the batch queue is the look-ahead, and slots are a wafer's", c.Stages)
	case c.validateTiers() != nil:
		return c.validateTiers()
	case c.Spec.validate() != nil:
		return c.Spec.validate()
	case c.Spec.Tokens > 0 && c.slotMode():
		return fmt.Errorf("speculative decoding needs a paged KV pool, not slots")
	case c.MaxBatchedTokens < c.MaxSeqs:
		// As vLLM: every running sequence may need a token in one step.
		return fmt.Errorf("max_num_batched_tokens (%d) is smaller than max_num_seqs (%d): raise the budget or lower max_num_seqs",
			c.MaxBatchedTokens, c.MaxSeqs)
	case c.NoChunkedPrefill && c.MaxBatchedTokens < c.MaxModelLen:
		// As vLLM: without chunking a prompt must fit one step's budget.
		return fmt.Errorf("max_num_batched_tokens (%d) is smaller than max_model_len (%d) with chunked prefill off: "+
			"enable chunked_prefill, raise the budget or lower max_model_len", c.MaxBatchedTokens, c.MaxModelLen)
	}
	return nil
}

// defersFrees reports whether a departing sequence's blocks wait for the
// step it was last scheduled in (Rules.DeferFrees): vLLM defers them on a
// KV consumer when more than one batch may be in flight.
func (c *Config) defersFrees() bool { return c.DeferFrees && c.AsyncScheduling && c.KVConsumer }

// CapacityTokens is the most tokens one sequence can hold in this instance:
// its largest slot in slot mode.
func (c *Config) CapacityTokens() int {
	if c.slotMode() {
		layouts := c.Layouts[:1] // only recompiling ever leaves the first layout
		if c.Pressure == PressureRecompile {
			layouts = c.Layouts
		}
		most := 0
		for _, l := range layouts {
			for _, sc := range l {
				most = max(most, sc.ContextTokens)
			}
		}
		return min(most, c.MaxModelLen)
	}
	if c.SlidingGroups > 0 {
		return min(c.slidingCapacity(), c.MaxModelLen)
	}
	return min(c.NumBlocks*c.BlockSize, c.MaxModelLen)
}

// BlocksHeld is how many blocks a sequence of tokens tokens holds once it
// decodes: its table, cdiv(tokens, B), and for each sliding-window group
// at most cdiv(window, B) + 1 of those (sliding.go). A prefill chunk of n
// tokens may take up to cdiv(window − 1 + n, B) + 1 per group while it
// runs. Not for slot mode.
func (c *Config) BlocksHeld(tokens int) int {
	blocks := (tokens + c.BlockSize - 1) / c.BlockSize
	if c.SlidingGroups == 0 {
		return blocks
	}
	window := (c.SlidingWindow+c.BlockSize-1)/c.BlockSize + 1
	return blocks + c.SlidingGroups*min(blocks, window)
}

// slidingCapacity is the longest sequence a hybrid model's pool can hold
// alone through every step of its life: its table, b blocks, and per
// sliding group at most min(b, K) with K = cdiv(window − 1 + budget, B) + 1,
// the most a prefill chunk within the token budget takes (vLLM's
// SlidingWindowSpec.max_memory_usage_bytes, in vllm/v1/kv_cache_interface.py).
func (c *Config) slidingCapacity() int {
	k := (c.SlidingWindow-1+c.MaxBatchedTokens+c.BlockSize-1)/c.BlockSize + 1
	g, n := c.SlidingGroups, c.NumBlocks
	blocks := n / (1 + g) // b ≤ K
	if n > (1+g)*k {
		blocks = n - g*k
	}
	return blocks * c.BlockSize
}

// validateSched checks the scheduling policy's name; slots (a wafer) admit
// in arrival order only.
func (c *Config) validateSched() error {
	if _, err := lookupSched(c.Scheduling); err != nil {
		return err
	}
	if c.slotMode() && c.Scheduling != "" && c.Scheduling != "fcfs" {
		return fmt.Errorf("scheduling policy %q needs a paged pool: slots admit in arrival order", c.Scheduling)
	}
	return nil
}
