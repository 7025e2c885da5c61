package engine

import (
	"math"
	"slices"
)

// SGLang's scheduler as rules of this engine (Rules.Admission =
// NewTokenRatio, Rules.Retract). The sources are sgl-project/sglang's
// python/sglang/srt/managers/schedule_policy.py (PrefillAdder:
// rem_total_tokens, _get_running_request_total_token_offset,
// add_one_req), schedule_batch.py (ScheduleBatch.check_decode_mem,
// retract_decode), scheduler.py (Scheduler.update_running_batch,
// _extend_requests_to_queue; the event loop's idle branch, which runs
// check_memory and resets new_token_ratio to its initial value) and
// environ.py (the defaults below).
//
// Admission: the scheduler keeps new_token_ratio, its estimate of the
// share of their remaining output the running requests will still
// generate. A waiting request is admitted while its uncached tokens and
// its remaining output (clipped at 4,096) are fewer than the free and
// evictable tokens less the running requests' remaining outputs scaled by
// the ratio, and less what the requests admitted before it in the pass
// take (their extend tokens and, unless chunked, their whole remaining
// output). The ratio starts at 0.7, falls by (0.7 − 0.098)/600 each
// decoding step down to 0.098, and is back at 0.7 when the engine idles.
//
// Retraction: before a step, if the decoding requests' next tokens need
// more blocks than are free, decoding requests are retracted in order —
// fewest output tokens first, then the longest prompt, then the latest
// in the batch — at least one, until the rest have room for 20 tokens
// each, or one is left. A retracted request's KV past its cached prompt
// is freed without entering the radix tree (its prompt stays cached, as
// the tree took it after its prefill), it joins the back of the waiting
// queue to re-prefill prompt and output, and the ratio becomes (the
// remaining requests' output so far + 20 each) / their max output,
// at most 1.
//
// A request's max output is its output length here (Seq.MaxNew), as a
// benchmark client sets max_tokens to it with ignore_eos.
const (
	sglInitRatio     = 0.7                                // SGLANG_INIT_NEW_TOKEN_RATIO × schedule_conservativeness 1
	sglMinRatio      = sglInitRatio * 0.14                // × SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
	sglRatioDecay    = (sglInitRatio - sglMinRatio) / 600 // over SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
	sglRetractSteps  = 20                                 // SGLANG_RETRACT_DECODE_STEPS
	sglClipMaxTokens = 4096                               // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
)

// NewTokenRatio is the instance's SGLang new-token ratio (0 under other
// rules).
func (in *Instance) NewTokenRatio() float64 { return in.ratio }

// remainingOut is what s may still generate here, clipped as SGLang's
// estimate clips it.
func remainingOut(s *Seq) int { return min(max(s.MaxNew-s.Generated, 0), sglClipMaxTokens) }

// startRatioPass sets the tokens the running sequences are expected to
// still take, at the start of an admission pass (PrefillAdder.__init__'s
// rem_total_token_offset).
func (in *Instance) startRatioPass() {
	in.ratioTaken = 0
	for _, s := range in.running {
		in.ratioTaken += float64(remainingOut(s)) * in.ratio
	}
}

// ratioAdmits reports whether SGLang admits s, starting from start cached
// tokens, with room free blocks for it (PrefillAdder.add_one_req: NO_TOKEN
// when total_tokens ≥ rem_total_tokens).
func (in *Instance) ratioAdmits(s *Seq, start, room int) bool {
	total := s.Tokens() - start + remainingOut(s)
	return float64(total) < float64(room*in.cfg.BlockSize)-in.ratioTaken
}

// chargeRatio counts what admitted s takes from the pass's room: its
// chunk of n tokens from start, page-rounded, and its remaining output
// unless the chunk leaves part of the prompt for later steps
// (_update_prefill_budget).
func (in *Instance) chargeRatio(s *Seq, start, n int) {
	in.ratioTaken += float64(in.blocksFor(n) * in.cfg.BlockSize)
	if start+n == s.Tokens() {
		in.ratioTaken += float64(remainingOut(s))
	}
}

// decoding reports whether running s computes its next token only.
func decoding(s *Seq) bool { return s.computed+int(s.inflight) == s.Tokens()-1 }

// retractForDecode is update_running_batch before the running pass:
// check_decode_mem, and retract_decode when it fails, or else the
// ratio's decay if any sequence decodes. It reports whether it
// retracted.
func (in *Instance) retractForDecode() bool {
	need, n := 0, 0
	for _, s := range in.running {
		if decoding(s) {
			n++
			if in.mem.room(s) <= 0 {
				need++
			}
		}
	}
	if need <= in.pool.FreeBlocks() || n < 2 { // a lone request is left to the running pass's preemption
		if n > 0 && in.cfg.Admission == NewTokenRatio {
			in.ratio = max(in.ratio-sglRatioDecay, sglMinRatio)
		}
		return false
	}
	for first := true; first || n > 1 && in.pool.FreeBlocks()*in.cfg.BlockSize < sglRetractSteps*n; first = false {
		in.retract(in.retractee())
		n--
	}
	in.retractedRatio()
	return true
}

// retractee is the position of the decoding sequence SGLang retracts
// next: the fewest generated tokens, then the longest prompt, then the
// last in the running set (retract_decode sorts by (output, −input)
// descending, stably, and pops the last).
func (in *Instance) retractee() int {
	best := -1
	for i, s := range in.running {
		if !decoding(s) {
			continue
		}
		if best < 0 || !retractedBefore(in.running[best], s) {
			best = i
		}
	}
	return best
}

// retractedBefore reports whether a is retracted before b, b later in
// the running set.
func retractedBefore(a, b *Seq) bool {
	if a.Generated != b.Generated {
		return a.Generated < b.Generated
	}
	return a.PromptTokens > b.PromptTokens
}

// retract takes the running sequence at position i out, preempted
// (policy.go: under Retract it keeps only its prompt's blocks findable
// and waits at the back of the queue).
func (in *Instance) retract(i int) {
	s := in.running[i]
	in.running = slices.Delete(in.running, i, i+1)
	in.due = slices.Delete(in.due, i, i+1)
	in.phase = slices.Delete(in.phase, i, i+1)
	in.trip = slices.Delete(in.trip, i, i+1)
	in.preempt(s)
}

// retractedRatio is the ratio after a retraction: the remaining
// sequences' generated tokens plus 20 each over their output, at most 1.
func (in *Instance) retractedRatio() {
	decoded, most := 0, 0
	for _, s := range in.running {
		decoded += s.Generated + sglRetractSteps
		most += s.MaxNew
	}
	if most == 0 {
		in.ratio = 1
		return
	}
	in.ratio = math.Min(1, float64(decoded)/float64(most))
}
