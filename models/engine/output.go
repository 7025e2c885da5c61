package engine

import "handoff/models/kv"

// Named output: the blocks a sequence fills with generated tokens.
//
// vLLM V1 hashes every full block of a request, prompt and output alike:
// Request.block_hashes grows as tokens are appended (vllm/v1/request.py,
// append_output_token_ids, with the hasher of get_request_block_hasher in
// vllm/v1/core/kv_cache_utils.py), and KVCacheManager.allocate_slots
// (vllm/v1/core/kv_cache_manager.py) caches the request's full blocks up to
// its computed tokens after each step. A multi-turn conversation's next
// prompt repeats the answer, so it finds the answer's blocks cached.
//
// Here the generated tokens are unique to the sequence unless the caller
// names them (Seq.Output): then its blocks past the prompt hash as the
// continuation [Prefix…, Output] and are published when the sequence
// finishes here — the earliest a later turn, sent after the answer has
// ended, can ask for them — rather than at each block boundary, which
// would keep the sequence from cruising. Unnamed output is as before:
// never hashed unless a preemption needs it (settlePrivate).

// content is the segments the first blocks blocks of s hash over: its
// Prefix, followed by its Output when it is named and they reach past the
// prompt's shareable blocks.
func (in *Instance) content(s *Seq, blocks int) []kv.Segment {
	if !s.namedOut || blocks <= s.shared {
		return s.Prefix
	}
	in.segs = append(append(in.segs[:0], s.Prefix...), s.Output)
	return in.segs
}

// commitOutput publishes the full blocks past the prompt's of a finishing
// sequence whose output is named, so a prompt that continues it hits them.
func (in *Instance) commitOutput(s *Seq) {
	end := min(s.committed, len(s.blocks))
	if !in.cfg.PrefixCaching || !s.namedOut || end <= s.shared {
		return
	}
	in.hashTo(s, end*in.cfg.BlockSize)
	for j := s.shared; j < end; j++ {
		in.pool.Commit(s.blocks, j, s.hashes[j])
	}
}
