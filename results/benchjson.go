package results

import (
	"encoding/json"
	"io"
	"math"
	"slices"
)

// BenchMeta is what a vLLM benchmark result names besides its figures: the
// scenario as the label, the served model, the load offered and the date.
type BenchMeta struct {
	Label          string
	Model          string
	RequestRate    float64 // configured requests/s; +Inf for a closed loop (vLLM's "inf")
	Burstiness     float64 // the gamma shape of the arrival gaps: 1 Poisson, 1/cv² gamma, +Inf constant
	MaxConcurrency int     // the closed loop's users; 0: none
	Date           string  // YYYYmmdd-HHMMSS, as vLLM's datetime.strftime("%Y%m%d-%H%M%S")
	// Goodput says whether the run has an SLO: vLLM writes request_goodput
	// only when --goodput names one, null otherwise.
	Goodput bool
}

// WriteBenchJSON writes a run as the result JSON of `vllm bench serve
// --save-result --save-detailed --percentile-metrics ttft,tpot,itl,e2el`
// (vllm/benchmarks/serve.py: the result dict of benchmark(), its figures
// from calculate_metrics(), and the metadata main() adds), so that
// dashboards reading those files read handoff's. Its figures are the
// summary's definitions, which are vLLM's: over completed requests, the
// span first arrival to last finish as the duration, TPOT per request, ITL
// over every gap, percentiles by linear interpolation, standard deviations
// over the population (np.std). The per-request lists hold every request in
// arrival order, with vLLM's values for a request that did not succeed: its
// TTFT if it had a first token, else 0; its output length and latency 0.
// itls lists an empty list per request, since the simulator keeps ITLs
// only as a distribution (their mean, median, std and p99 are from it, std
// within the histogram's bucket width); generated_texts are empty, errors
// hold each request's reason, and queue_times (the client's wait for a
// --max-concurrency slot) are 0, since a handoff client sends each request
// when it arrives. The ITL standard deviation is approximate, and so is
// max_output_tokens_per_s (benchPeaks). Cost: O(n log n) in the records,
// plus O(tokens) for the peak.
func WriteBenchJSON(w io.Writer, recs []Record, itl *Histogram, s Summary, meta BenchMeta) error {
	out := benchHeader(meta, len(recs))
	var ttft, tpot, e2e []float64 // ms, completed requests
	var inTok, outTok int64
	for i := range recs {
		r := &recs[i]
		if r.Status != Completed {
			continue
		}
		inTok, outTok = inTok+int64(r.PromptTokens), outTok+int64(r.OutputTokens)
		ttft = append(ttft, float64(r.FirstTokenNs-r.ArrivalNs)/1e6)
		e2e = append(e2e, float64(r.FinishNs-r.ArrivalNs)/1e6)
		if t, ok := tpotNs(r); ok {
			tpot = append(tpot, t/1e6)
		}
	}
	dur := spanS(recs)
	perS := func(x float64) float64 {
		if dur <= 0 {
			return 0
		}
		return x / dur
	}
	var goodput any // null without an SLO, as vLLM's without --goodput
	if meta.Goodput {
		goodput = s.SLO.RequestGoodputRPS
	}
	peakTokens, peakRequests := benchPeaks(recs)
	for k, v := range map[string]any{
		"duration": dur, "completed": s.Requests.Completed, "failed": int64(len(recs)) - s.Requests.Completed,
		"total_input_tokens": inTok, "total_output_tokens": outTok,
		"request_throughput": s.Throughput.RequestsPerS, "request_goodput": goodput,
		"output_throughput": perS(float64(outTok)), "total_token_throughput": perS(float64(inTok + outTok)),
		"max_output_tokens_per_s": peakTokens, "max_concurrent_requests": peakRequests, "rtfx": 0.0,
	} {
		out[k] = v
	}
	benchLists(out, recs)
	benchStats(out, "ttft", ttft)
	benchStats(out, "tpot", tpot)
	benchStats(out, "e2el", e2e)
	if itl != nil && itl.Count() > 0 {
		out["mean_itl_ms"], out["median_itl_ms"] = itl.Mean()/1e6, itl.Quantile(0.5)/1e6
		out["std_itl_ms"], out["p99_itl_ms"] = itl.Std()/1e6, itl.Quantile(0.99)/1e6
	} else {
		benchStats(out, "itl", nil)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// benchHeader is the setup and traffic keys main() writes before the
// figures.
func benchHeader(meta BenchMeta, n int) map[string]any {
	out := map[string]any{
		"date": meta.Date, "backend": "handoff", "endpoint_type": "handoff", "label": meta.Label,
		"model_id": meta.Model, "tokenizer_id": meta.Model, "num_prompts": n,
		"request_rate": benchInf(meta.RequestRate), "burstiness": benchInf(meta.Burstiness), "max_concurrency": nil,
	}
	if meta.MaxConcurrency > 0 {
		out["max_concurrency"] = meta.MaxConcurrency
	}
	return out
}

// benchLists adds the per-request lists of --save-detailed, in arrival
// order: times in s, start times from the run's start.
func benchLists(out map[string]any, recs []Record) {
	n := len(recs)
	inputLens, outputLens := make([]int32, n), make([]int32, n)
	ttfts, latencies, starts, queues := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	itls, texts, errs := make([][]float64, n), make([]string, n), make([]string, n)
	for i := range recs {
		r := &recs[i]
		inputLens[i], itls[i], errs[i] = r.PromptTokens, []float64{}, r.Reason
		starts[i] = float64(r.ArrivalNs) / 1e9
		if r.OutputTokens > 0 {
			ttfts[i] = float64(r.FirstTokenNs-r.ArrivalNs) / 1e9
		}
		if r.Status == Completed {
			outputLens[i], latencies[i] = r.OutputTokens, float64(r.FinishNs-r.ArrivalNs)/1e9
		}
	}
	for k, v := range map[string]any{
		"input_lens": inputLens, "output_lens": outputLens, "ttfts": ttfts, "itls": itls,
		"latencies": latencies, "start_times": starts, "queue_times": queues,
		"generated_texts": texts, "errors": errs,
	} {
		out[k] = v
	}
}

// benchStats adds vLLM's mean, median, std and p99 of xs (ms) under
// metric's keys; zeros when xs is empty.
func benchStats(out map[string]any, metric string, xs []float64) {
	var mean, std, median, p99 float64
	if len(xs) > 0 {
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		for _, x := range xs {
			std += (x - mean) * (x - mean)
		}
		std = math.Sqrt(std / float64(len(xs)))
		median, p99 = Quantile(sorted, 0.5), Quantile(sorted, 0.99)
	}
	out["mean_"+metric+"_ms"], out["median_"+metric+"_ms"] = mean, median
	out["std_"+metric+"_ms"], out["p99_"+metric+"_ms"] = std, p99
}

// spanS is the run's span, first arrival to last finish, in s.
func spanS(recs []Record) float64 {
	if len(recs) == 0 {
		return 0
	}
	first, last := recs[0].ArrivalNs, recs[0].FinishNs
	for i := range recs {
		first, last = min(first, recs[i].ArrivalNs), max(last, recs[i].FinishNs)
	}
	return float64(last-first) / 1e9
}

// benchInf is a number as vLLM's result writes it: "inf" for +Inf, as
// main() writes an infinite request_rate. (Python's json.dump would write
// an infinite burstiness as the bare Infinity no JSON parser but Python's
// reads; the string parses with float() all the same.)
func benchInf(x float64) any {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return x
}
