package engine

import "fmt"

// Speculative decoding, as vLLM V1 runs it.
//
// A drafter proposes k tokens after every step for each sequence that
// sampled (perf.DrafterTimer prices it; models/draft names the kinds).
// The next step schedules a decoding sequence for 1 + k tokens — its
// last sampled token and the drafts (Scheduler.schedule in
// vllm/v1/core/sched/scheduler.py: num_new_tokens = num_tokens_with_spec −
// num_computed_tokens, capped by the token budget and by max_model_len −
// 1 − num_computed_tokens; scheduled_spec_decode_tokens) — and allocates
// blocks for them plus k lookahead slots for a drafter that writes its
// own KV ahead (allocate_slots(..., num_lookahead_tokens)); a sequence
// entering with no computed tokens reserves none (the P/D edge case
// noted there, and vLLM PR #46694), so a decoder's reservation for a
// remote prompt takes none and its admission once the KV is in does.
// The target verifies the drafts (vllm/v1/sample/rejection_sampler.py):
// it accepts them left to right until the first rejection and samples one
// more token, so a step yields 1 + a tokens for a accepted. The
// scheduler then takes back the rejected positions (update_from_output:
// num_computed_tokens −= num_rejected) — their slots stay allocated and
// are written again next step — and counts the drafts and accepted
// tokens (SpecDecodingStats in vllm/v1/spec_decode/metrics.py:
// num_drafts, num_draft_tokens, num_accepted_tokens). A sequence's KV so
// grows by the tokens it keeps.
//
// Here the i-th draft token is accepted, given the ones before it were,
// with probability Speculative.Accept[i]: a draw from the run's seed, the
// request and its position, independent of the order in which steps
// visit sequences. A sequence stops at its last token here even when
// more were accepted (vLLM truncates at max_tokens; its statistics still
// count them, as here). Speculative sequences do not cruise (cruise.go
// assumes one token per step; the benchmarks in sim/ measure what that
// costs).

// Speculative configures an instance's speculative decoding; Tokens 0
// means none.
type Speculative struct {
	Tokens    int       // draft tokens per sequence per step (num_speculative_tokens)
	Lookahead bool      // reserve Tokens KV slots ahead per sequence (model-based drafters)
	Accept    []float64 // the i-th draft's acceptance given the earlier ones', len Tokens, each in [0, 1]
	Seed      uint64    // the run's seed: the draws are a function of it, the request and the position
}

// validate checks the configuration.
func (s *Speculative) validate() error {
	if s.Tokens == 0 {
		return nil
	}
	if s.Tokens < 0 || len(s.Accept) != s.Tokens {
		return fmt.Errorf("speculative decoding with %d draft tokens needs as many acceptance rates, got %d", s.Tokens, len(s.Accept))
	}
	for i, a := range s.Accept {
		if !(a >= 0 && a <= 1) {
			return fmt.Errorf("speculative acceptance[%d] = %g not in [0, 1]", i, a)
		}
	}
	return nil
}

// SpecStats are an instance's speculative-decoding counters, as vLLM's
// SpecDecodingStats counts them.
type SpecStats struct {
	Drafts      int64 // sequence steps that verified drafts (num_drafts)
	DraftTokens int64 // draft tokens verified (num_draft_tokens)
	Accepted    int64 // of those, accepted (num_accepted_tokens)
}

// drafts is how many draft tokens s, planned for n tokens with budget
// left, verifies in the coming step: k for a decoding sequence (one that
// sampled in its last step here), fewer when the budget or max_model_len
// cuts them, 0 otherwise.
func (in *Instance) drafts(s *Seq, n, budget int) int {
	k := in.cfg.Spec.Tokens
	if k == 0 || n != 1 || s.Generated == 0 || s.reprefill {
		return 0
	}
	return max(0, min(k, budget-1, in.cfg.MaxModelLen-2-s.computed))
}

// lookahead is the KV slots reserved ahead of a sequence that has
// computed computed tokens.
func (in *Instance) lookahead(computed int) int {
	if !in.cfg.Spec.Lookahead || computed == 0 {
		return 0
	}
	return in.cfg.Spec.Tokens
}

// slotsFor is the tokens a sequence's blocks must hold to compute up to
// tokens tokens: those plus its lookahead, within max_model_len
// (KVCacheManager.allocate_slots).
func (in *Instance) slotsFor(computed, tokens int) int {
	if la := in.lookahead(computed); la > 0 {
		return max(tokens, min(tokens+la, in.cfg.MaxModelLen))
	}
	return tokens
}

// planVerify adds s, at running position pos, to the step with its decode
// token and d draft tokens to verify.
func (in *Instance) planVerify(s *Seq, pos, d int) {
	in.step = append(in.step, stepEntry{s: s, pos: int32(pos), tokens: int32(1 + d)})
	s.lastStep = in.stats.Steps + 1
	ctx := int64(s.computed + 1)
	b := &in.batch
	b.DecodeSeqs++
	b.DecodeContext += ctx
	b.SpecTokens += d
	b.SpecAttn += int64(d)*ctx + int64(d*(d+1)/2)
}

// emitAccepted draws how many of the d drafts s verified were accepted
// and delivers them after the token the step sampled (emitToken), in the
// same step: no gap of their own, as a client receives them in one chunk.
func (in *Instance) emitAccepted(s *Seq, d int) {
	a := in.accepted(s, d)
	in.stats.Spec.Drafts++
	in.stats.Spec.DraftTokens += int64(d)
	in.stats.Spec.Accepted += int64(a)
	for range a {
		if s.state != stateRunning {
			return // finished with an earlier token
		}
		s.computed++ // the accepted draft's KV is the context's
		s.Generated++
		in.stats.DecodeTokens++
		in.res.DraftedTokens++
		if s.Generated >= s.MaxNew || s.Tokens() >= in.cfg.MaxModelLen {
			in.finish(s)
		}
	}
}

// accepted draws the accepted prefix of s's d drafts, verified after its
// Generated-th token here.
func (in *Instance) accepted(s *Seq, d int) int {
	for i := range d {
		if specDraw(in.cfg.Spec.Seed, s.UniqueID, uint64(s.Generated), uint64(i)) >= in.cfg.Spec.Accept[i] {
			return i
		}
	}
	return d
}

// specDraw is a uniform number in [0, 1) determined by its arguments
// (SplitMix64's finaliser over their mix).
func specDraw(seed, id, pos, i uint64) float64 {
	x := seed ^ mix64(id+0x9e3779b97f4a7c15) ^ mix64(pos<<8|i^0xbf58476d1ce4e5b9)
	return float64(mix64(x)>>11) / (1 << 53)
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
