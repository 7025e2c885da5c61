package engine

// Sliding-window KV cache groups: vLLM's hybrid KV cache manager.
//
// A hybrid model's layers form KV cache groups of equal size that share
// the pool, each block holding one group's layers (llm.Model.KVGroups).
// A sequence's table (Seq.blocks) is its full-attention group's; each of
// the Config.SlidingGroups sliding-window groups has a table of the same
// length whose leading entries, the blocks that slid out of the window,
// are null: vLLM's SlidingWindowManager (vllm/v1/core/
// single_type_kv_cache_manager.py) frees them in remove_skipped_blocks,
// which allocate_slots (vllm/v1/core/kv_cache_manager.py) calls before it
// allocates a step's blocks. For a step computing up to tokens from
// computed, each group so holds
//
//	cdiv(tokens, B) − ⌊max(0, computed − window + 1) / B⌋
//
// blocks: cdiv(window, B) or one more in steady decode, up to
// cdiv(window − 1 + chunk, B) + 1 in a prefill chunk (SlidingWindowSpec.
// max_memory_usage_bytes in vllm/v1/kv_cache_interface.py). The engine
// keeps only Seq.skipped, the table's null entries; the blocks themselves
// are held as a count in the pool (kv.Pool.AllocateAnonymous, FreeCounted):
// nobody looks them up. They are freed as full blocks holding content,
// queued as vLLM queues them cached (at the tail, counted as evicted when
// reused), and, when a sequence ends, before its full-attention table.
//
// The prefix cache serves the full-attention group only: a hit of h
// blocks charges the sliding groups the window before the hit as fresh
// blocks, where vLLM finds them cached too (SlidingWindowManager.
// find_longest_cache_hit, which needs them contiguous) and shares them
// with a running holder. The hit is thereby an upper bound — vLLM's
// sliding blocks slide out, and may be evicted, well before the full
// ones — and the window it charges costs at most cdiv(window − 1, B)
// blocks per group more than sharing would.

// slidingSkip is how many leading blocks a sliding-window table no longer
// needs once computed tokens are computed: vLLM's get_num_skipped_tokens,
// max(0, computed − window + 1), in whole blocks.
func (c *Config) slidingSkip(computed int) int {
	return max(0, computed-c.SlidingWindow+1) / c.BlockSize
}

// slidingBlocks is how many blocks s's sliding-window groups hold (s must
// not be cruising).
func (in *Instance) slidingBlocks(s *Seq) int {
	return in.cfg.SlidingGroups * (len(s.blocks) - int(s.skipped))
}

// SeqBlocks is how many KV blocks s holds in the pool: its table (Blocks)
// and its sliding-window groups' blocks. A cruising sequence may hold more
// (UncountedBlocks).
func (in *Instance) SeqBlocks(s *Seq) int { return len(s.blocks) + in.slidingBlocks(s) }

// slidingFree frees the blocks of s's sliding-window groups that a step
// starting from computed tokens no longer needs (remove_skipped_blocks).
func (in *Instance) slidingFree(s *Seq, computed int) {
	if in.cfg.SlidingGroups == 0 {
		return
	}
	skip := min(max(int(s.skipped), in.cfg.slidingSkip(computed)), len(s.blocks))
	if gone := in.cfg.SlidingGroups * (skip - int(s.skipped)); gone > 0 {
		in.pool.FreeCounted(gone, gone)
		s.skipped = int32(skip)
	}
}

// slidingNeed is how many blocks s's sliding-window groups need, after
// slidingFree, for its table to reach blocks blocks in a step starting
// from computed tokens: the new entries that are not null.
func (in *Instance) slidingNeed(s *Seq, computed, blocks int) int {
	if in.cfg.SlidingGroups == 0 {
		return 0
	}
	skip := max(int(s.skipped), in.cfg.slidingSkip(computed))
	return in.cfg.SlidingGroups * max(0, blocks-max(skip, len(s.blocks)))
}

// slidingTake gives s's sliding-window groups the n blocks slidingNeed
// asked for, once s's table has reached its new length, and records the
// table's null entries for a step starting from computed tokens. The
// caller has checked that the pool holds them.
func (in *Instance) slidingTake(s *Seq, computed, n int) {
	if in.cfg.SlidingGroups == 0 {
		return
	}
	in.pool.AllocateAnonymous(n)
	s.skipped = int32(min(max(int(s.skipped), in.cfg.slidingSkip(computed)), len(s.blocks)))
}

// slidingFreeAll frees all of s's sliding-window blocks, before its table
// is freed (vLLM frees a hybrid model's groups in order, and gpt-oss's
// first layer, so its first group, slides): those holding a committed
// full block's content as content, the rest as empty.
func (in *Instance) slidingFreeAll(s *Seq) {
	if in.cfg.SlidingGroups == 0 {
		return
	}
	held := in.slidingBlocks(s)
	content := in.cfg.SlidingGroups * max(0, min(s.committed, len(s.blocks))-int(s.skipped))
	in.pool.FreeCounted(held, content)
	s.skipped = 0
}

// growSliding is grow for a hybrid model, as vLLM's allocate_slots: the
// sliding-window groups first free what slid out of the window (kept even
// when the allocation then fails), then every group gets the blocks for
// tokens tokens.
func (in *Instance) growSliding(s *Seq, tokens int) bool {
	in.slidingFree(s, s.computed)
	blocks := in.blocksFor(tokens)
	need := blocks - len(s.blocks)
	if need <= 0 {
		return true
	}
	sliding := in.slidingNeed(s, s.computed, blocks)
	if need+sliding > in.pool.FreeBlocks() {
		return false
	}
	s.blocks, _ = in.pool.Allocate(s.blocks, need)
	in.slidingTake(s, s.computed, sliding)
	return true
}

// slidingLag is the number of steps from a decode step in which a
// sequence's window drops a block (computed ≡ window − 1 mod B) to the
// next in which its table grows (computed ≡ 0 mod B).
func (c *Config) slidingLag() int64 {
	return int64((c.BlockSize - (c.SlidingWindow-1)%c.BlockSize) % c.BlockSize)
}

// firstSlide is the first step after step k, in which s (computed tokens
// computed) sampled a token, whose decode token makes its window drop a
// block; the step computing from computed + j − 1 does when that is the
// first to skip more than s.skipped blocks.
func (in *Instance) firstSlide(s *Seq, k int64) int64 {
	j := (int(s.skipped)+1)*in.cfg.BlockSize + in.cfg.SlidingWindow - s.computed
	return k + int64(max(1, j))
}

// crossSliding is growCruising for a hybrid model: at step k the cruising
// sequence at pos is due because its window drops a block (freed at once,
// as the eager path's slidingFree would), or its table needs one (a block
// for every group, as a count), or both. It reports false, having changed
// nothing, when the blocks it needs are not free.
func (in *Instance) crossSliding(pos int, k int64) bool {
	t := &in.trip[pos]
	g, bs := in.cfg.SlidingGroups, int64(in.cfg.BlockSize)
	slides := t.slideBack > 0 && k == t.lastStep-int64(t.slideBack)
	grows := !slides || in.cfg.slidingLag() == 0
	free := in.pool.FreeBlocks()
	if slides {
		free += g // freed first
	}
	if grows && free < 1+g {
		return false
	}
	next := k + in.cfg.slidingLag() // the growth after a slide
	if slides {
		in.pool.FreeCounted(g, g)
		t.slideBack -= int32(bs)
	}
	if grows {
		in.pool.AllocateAnonymous(1 + g)
		t.grown++
		next = k + bs
	}
	if t.slideBack > 0 {
		next = min(next, t.lastStep-int64(t.slideBack))
	}
	in.due[pos] = min(next, t.lastStep)
	return true
}

// settleSliding records, as a cruising sequence settles, the blocks its
// window dropped while it cruised: it took part in every step planned up
// to the last, which computed from its planned − 1 tokens (planned is its
// computed, and one more when that step was lost with a crash).
func (in *Instance) settleSliding(s *Seq, planned int) {
	if in.cfg.SlidingGroups > 0 {
		s.skipped = int32(max(int(s.skipped), in.cfg.slidingSkip(planned-1)))
	}
}
