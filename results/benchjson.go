package results

import (
	"encoding/json"
	"io"
	"math"
	"slices"
)

// BenchMeta is what a vLLM benchmark result names besides its figures: the
// scenario as the label, the served model, and the load offered.
type BenchMeta struct {
	Label          string
	Model          string
	RequestRate    float64 // offered requests/s; +Inf for a closed loop (vLLM's "inf")
	MaxConcurrency int     // the closed loop's users; 0: none
}

// WriteBenchJSON writes a run as the result JSON of `vllm bench serve
// --save-result` (vllm/benchmarks/serve.py: the result dict of benchmark()
// and the metadata main() adds), so that dashboards reading those files
// read handoff's. Its figures are the summary's definitions, which are
// vLLM's: over completed requests, the span first arrival to last finish as
// the duration, TPOT per request, ITL over every gap, percentiles by linear
// interpolation, standard deviations over the population (np.std). ttfts,
// input_lens and output_lens list every request in arrival order (0 for
// those that produced nothing, as vLLM's failed outputs); itls lists an
// empty list per request, since the simulator keeps ITLs only as a
// distribution (their mean, median, std and p99 are from it, std within
// the histogram's bucket width); generated_texts are empty and errors hold
// each request's reason. The ITL standard deviation is the only
// approximate figure. Cost: O(n log n) in the records.
func WriteBenchJSON(w io.Writer, recs []Record, itl *Histogram, s Summary, meta BenchMeta) error {
	out := map[string]any{
		"date": "", "backend": "handoff", "endpoint_type": "handoff", "label": meta.Label,
		"model_id": meta.Model, "tokenizer_id": meta.Model, "num_prompts": len(recs),
		"request_rate": benchRate(meta.RequestRate), "burstiness": 1.0, "max_concurrency": nil,
	}
	if meta.MaxConcurrency > 0 {
		out["max_concurrency"] = meta.MaxConcurrency
	}
	var ttft, tpot, e2e []float64 // ms, completed requests
	var inTok, outTok int64
	n := len(recs)
	inputLens, outputLens, ttfts := make([]int32, n), make([]int32, n), make([]float64, n)
	itls, texts, errs := make([][]float64, n), make([]string, n), make([]string, n)
	for i := range recs {
		r := &recs[i]
		inputLens[i], outputLens[i], itls[i], errs[i] = r.PromptTokens, r.OutputTokens, []float64{}, r.Reason
		if r.OutputTokens > 0 {
			ttfts[i] = float64(r.FirstTokenNs-r.ArrivalNs) / 1e9
		}
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
	for k, v := range map[string]any{
		"duration": dur, "completed": s.Requests.Completed, "failed": int64(n) - s.Requests.Completed,
		"total_input_tokens": inTok, "total_output_tokens": outTok,
		"request_throughput": s.Throughput.RequestsPerS, "request_goodput": s.SLO.RequestGoodputRPS,
		"output_throughput": perS(float64(outTok)), "total_token_throughput": perS(float64(inTok + outTok)),
		"input_lens": inputLens, "output_lens": outputLens, "ttfts": ttfts, "itls": itls,
		"generated_texts": texts, "errors": errs,
	} {
		out[k] = v
	}
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

// benchRate is the request rate as vLLM writes it: a number, or "inf".
func benchRate(r float64) any {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return r
}
