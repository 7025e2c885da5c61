package results

import (
	"cmp"
	"slices"
)

// benchPeaks computes calculate_metrics()'s max_output_tokens_per_s and
// max_concurrent_requests (vllm/benchmarks/serve.py) over the completed
// requests. The first is the most output tokens received in one 1-second
// bucket counted from the first completed request's start; vLLM places a
// request's tokens at its TTFT and then at each measured gap, while a
// record keeps only its first and last token's times, so the tokens
// between are spread evenly over that span (TPOT apart). The second is the
// most requests in flight at once, each over [arrival, finish), a finish
// counted before an arrival at the same instant. Cost: O(n log n + output
// tokens).
func benchPeaks(recs []Record) (tokensPerS float64, concurrent int) {
	done := make([]*Record, 0, len(recs))
	for i := range recs {
		if recs[i].Status == Completed {
			done = append(done, &recs[i])
		}
	}
	if len(done) == 0 {
		return 0, 0
	}
	return float64(peakTokensPerS(done)), peakConcurrency(done)
}

// peakTokensPerS is the largest count of output tokens in a 1-second
// bucket from the first start.
func peakTokensPerS(done []*Record) int64 {
	startNs, endNs := done[0].ArrivalNs, done[0].FinishNs
	for _, r := range done {
		startNs, endNs = min(startNs, r.ArrivalNs), max(endNs, r.FinishNs)
	}
	// vLLM: int(ceil(max_end - min_start)) + 1 buckets.
	buckets := make([]int64, (endNs-startNs+1e9-1)/1e9+1)
	for _, r := range done {
		n := int64(r.OutputTokens)
		span := r.FinishNs - r.FirstTokenNs
		for k := int64(0); k < n; k++ {
			at := r.FirstTokenNs
			if n > 1 { // k·span/(n−1), in parts that cannot overflow
				at += span/(n-1)*k + span%(n-1)*k/(n-1)
			}
			buckets[(at-startNs)/1e9]++
		}
	}
	var peak int64
	for _, b := range buckets {
		peak = max(peak, b)
	}
	return peak
}

// peakConcurrency sweeps the requests' [arrival, finish) intervals.
func peakConcurrency(done []*Record) int {
	type event struct {
		atNs  int64
		delta int
	}
	events := make([]event, 0, 2*len(done))
	for _, r := range done {
		events = append(events, event{r.ArrivalNs, 1}, event{r.FinishNs, -1})
	}
	slices.SortFunc(events, func(a, b event) int {
		if a.atNs != b.atNs {
			return cmp.Compare(a.atNs, b.atNs)
		}
		return a.delta - b.delta // departures first
	})
	cur, peak := 0, 0
	for _, e := range events {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}
