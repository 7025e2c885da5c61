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
	HostBlocks       int // swap: blocks the host tier holds (0: swap falls back to recompute)

	// SharedQueue keeps decode-role sequences that wait for remote KV, or
	// whose KV has arrived, in the waiting queue with everything else, as
	// vLLM's scheduler did before it kept such requests in a queue of
	// their own (skipped_waiting) served first. A preempted sequence at the
	// head that cannot get its blocks then stops admission before the
	// sequences behind it that hold theirs, and a decoder can deadlock.
	// False (the default) is today's vLLM: sequences whose KV arrived are
	// admitted first (see Instance.KVArrived).
	SharedQueue bool

	// Slot mode (wafer-scale decoders): compiled layouts of sequence slots
	// instead of a paged pool. Layouts[0] is the first; recompiling moves to
	// another after RecompileNs. Empty: paged mode.
	Layouts     [][]SlotClass
	Pressure    Pressure
	RecompileNs int64
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
	case c.HostBlocks < 0:
		return fmt.Errorf("host tier must not be negative, got %d blocks", c.HostBlocks)
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
	return min(c.NumBlocks*c.BlockSize, c.MaxModelLen)
}
