package scenarios

import (
	"math"

	"handoff/models/autoscale"
	"handoff/models/engine"
	"handoff/models/perf"
)

// poolCapacity is what the SLA planner knows of one instance of a pool:
// its step-time model and engine limits (the pair build.go's poolEngine
// returns and every sim.Instance of the pool carries), priced on batches
// of identical requests — the step-time model in place of Dynamo's
// pre-deployment profile. It implements autoscale.Capacity. Costs: a
// prefill query prices one step per packing considered (at most
// max_num_seqs) plus one per chunk; a decode query is a binary search,
// about 2·log2(max_num_seqs) steps.
type poolCapacity struct {
	timer perf.StepTimer
	eng   engine.Config
}

var _ autoscale.Capacity = (*poolCapacity)(nil)

// newPoolCapacity returns the capacity of one instance with the given step
// timer and engine configuration.
func newPoolCapacity(timer perf.StepTimer, eng engine.Config) *poolCapacity {
	return &poolCapacity{timer: timer, eng: eng}
}

// tokens rounds a mean length to a whole number of tokens, at least 1.
func tokens(x float64) int {
	if !(x >= 1) {
		return 1
	}
	return int(math.Min(math.Round(x), 1<<30))
}

// PrefillNs prefills one prompt of isl tokens alone, in chunks of
// max_num_batched_tokens, each chunk attending to the ones before it (the
// TTFT of a request that does not queue; Dynamo's interpolate_ttft).
func (c *poolCapacity) PrefillNs(isl float64) int64 {
	n, budget := tokens(isl), max(c.eng.MaxBatchedTokens, 1)
	var total int64
	for done := 0; done < n; done += budget {
		total += c.timer.StepNs(prefillBatch(1, min(budget, n-done), done))
	}
	return total
}

// prefillBatch is a step of k prompt chunks of c new tokens, each after
// ctx tokens already computed.
func prefillBatch(k, c, ctx int) *perf.Batch {
	return &perf.Batch{PrefillSeqs: k, PrefillTokens: k * c, PrefillTokensSq: float64(k) * float64(c) * float64(c),
		PrefillAttn: float64(k) * float64(c) * (float64(ctx) + float64(c+1)/2), PrefillCtxRead: int64(k) * int64(ctx)}
}

// PrefillTokensPerSec is the prompt tokens per second one instance
// prefills for back-to-back prompts of isl tokens. A prompt longer than
// the token budget runs alone in chunks (isl / PrefillNs). Shorter ones
// pack k to a step, k ≤ ⌊budget/isl⌋ and ≤ max_num_seqs, and each waits
// for its whole step, so k is the largest packing whose step meets ttftNs:
// k·isl / step(k). When not even one prompt alone meets ttftNs, this is
// the throughput of prompts one at a time: the target cannot be met by
// adding instances, so the pool is sized for the load.
func (c *poolCapacity) PrefillTokensPerSec(isl float64, ttftNs int64) float64 {
	n, budget := tokens(isl), max(c.eng.MaxBatchedTokens, 1)
	kMax := min(budget/n, max(c.eng.MaxSeqs, 1))
	if kMax <= 1 {
		return float64(n) / (float64(c.PrefillNs(isl)) / 1e9)
	}
	best := float64(n) / (float64(c.timer.StepNs(prefillBatch(1, n, 0))) / 1e9)
	for k := 2; k <= kMax; k++ {
		step := c.timer.StepNs(prefillBatch(k, n, 0))
		if step > ttftNs {
			break // step time does not fall as the batch grows
		}
		best = max(best, float64(k*n)/(float64(step)/1e9))
	}
	return best
}

// decodeBatch is a decode step of b requests, each at context ctx.
func decodeBatch(b, ctx int) *perf.Batch {
	return &perf.Batch{DecodeSeqs: b, DecodeContext: int64(b) * int64(ctx)}
}

// decodeContext is the mean context of a request of isl prompt and osl
// output tokens over its decode: isl + osl/2, as Dynamo's planner takes it.
func decodeContext(isl, osl float64) int { return tokens(isl + osl/2) }

// DecodeStepNs is one decode step with batch requests at context
// isl + osl/2 (Dynamo's interpolate_itl at that concurrency).
func (c *poolCapacity) DecodeStepNs(isl, osl, batch float64) int64 {
	return c.timer.StepNs(decodeBatch(tokens(batch), decodeContext(isl, osl)))
}

// maxDecodeBatch is the most requests at context ctx one instance holds:
// max_num_seqs, and the KV blocks (each request holding its blocks at the
// mean context; slot-mode instances are bounded by max_num_seqs alone).
func (c *poolCapacity) maxDecodeBatch(ctx int) int {
	most := max(c.eng.MaxSeqs, 1)
	if c.eng.NumBlocks > 0 && c.eng.BlockSize > 0 {
		most = min(most, max(c.eng.NumBlocks/c.eng.BlocksHeld(ctx), 1))
	}
	return most
}

// DecodeTokensPerSec is b / step(b) tokens per second for the largest
// batch b, within max_num_seqs and the KV blocks, whose step at context
// isl + osl/2 stays within tpotNs (Dynamo's find_best_throughput_per_gpu).
// When even one request's step exceeds tpotNs, this is the throughput of
// one request alone, for the reason PrefillTokensPerSec gives.
func (c *poolCapacity) DecodeTokensPerSec(isl, osl float64, tpotNs int64) float64 {
	ctx := decodeContext(isl, osl)
	lo, hi := 1, c.maxDecodeBatch(ctx) // step(lo) ≤ tpot or lo = 1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.timer.StepNs(decodeBatch(mid, ctx)) <= tpotNs {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return float64(lo) / (float64(c.timer.StepNs(decodeBatch(lo, ctx))) / 1e9)
}
