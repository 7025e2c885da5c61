package results

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestWriteBenchJSON: vLLM's keys and figures, by hand: three completed
// requests (TTFT 100, 200, 300 ms; one token each but the last, of 11 at
// TPOT 50 ms) and a dropped one.
func TestWriteBenchJSON(t *testing.T) {
	ms := int64(1e6)
	recs := []Record{
		{ID: 0, ArrivalNs: 0, FirstTokenNs: 100 * ms, FinishNs: 100 * ms, PromptTokens: 10, OutputTokens: 1, Status: Completed},
		{ID: 1, ArrivalNs: 0, FirstTokenNs: 200 * ms, FinishNs: 200 * ms, PromptTokens: 20, OutputTokens: 1, Status: Completed},
		{ID: 2, ArrivalNs: 0, FirstTokenNs: 300 * ms, FinishNs: 800 * ms, PromptTokens: 30, OutputTokens: 11, Status: Completed},
		{ID: 3, ArrivalNs: 1000 * ms, FinishNs: 1000 * ms, PromptTokens: 40, Status: Dropped, Reason: "too long"},
	}
	var itl Histogram
	for range 10 {
		itl.Add(50 * ms)
	}
	s := Summarize(recs, &itl, RunInfo{SLO: SLO{TTFTNs: 1e9, TPOTNs: 1e9, Attainment: 0.9}})
	var b bytes.Buffer
	meta := BenchMeta{Label: "l", Model: "m", RequestRate: math.Inf(1), Burstiness: 1, MaxConcurrency: 4, Date: "20250101-000000", Goodput: true}
	if err := WriteBenchJSON(&b, recs, &itl, s, meta); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"completed": 3.0, "failed": 1.0, "num_prompts": 4.0, "total_input_tokens": 60.0, "total_output_tokens": 13.0,
		"duration": 1.0, "request_throughput": 3.0, "output_throughput": 13.0, "total_token_throughput": 73.0,
		"request_rate": "inf", "max_concurrency": 4.0, "model_id": "m", "label": "l",
		"mean_ttft_ms": 200.0, "median_ttft_ms": 200.0, "std_ttft_ms": math.Sqrt(20000.0 / 3), "p99_ttft_ms": 298.0,
		"mean_tpot_ms": 50.0, "mean_e2el_ms": 1100.0 / 3, "mean_itl_ms": 50.0, "median_itl_ms": 50.0,
		"date": "20250101-000000", "burstiness": 1.0, "rtfx": 0.0,
		// All 13 tokens fall in the first second; the three requests overlap at 0.
		"max_output_tokens_per_s": 13.0, "max_concurrent_requests": 3.0,
	}
	for k, v := range want {
		g := got[k]
		if f, ok := v.(float64); ok {
			if gf, ok := g.(float64); !ok || math.Abs(gf-f) > 1e-9*math.Max(1, math.Abs(f)) {
				t.Errorf("%s = %v, want %v", k, g, v)
			}
		} else if g != v {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
	if ttfts := got["ttfts"].([]any); len(ttfts) != 4 || ttfts[2] != 0.3 || ttfts[3] != 0.0 {
		t.Errorf("ttfts %v, want [0.1 0.2 0.3 0]", ttfts)
	}
	if errs := got["errors"].([]any); errs[3] != "too long" || errs[0] != "" {
		t.Errorf("errors %v", errs)
	}
	lists := map[string][]any{"latencies": {0.1, 0.2, 0.8, 0.0}, "start_times": {0.0, 0.0, 0.0, 1.0},
		"queue_times": {0.0, 0.0, 0.0, 0.0}, "output_lens": {1.0, 1.0, 11.0, 0.0}}
	for k, want := range lists {
		if g, ok := got[k].([]any); !ok || !slices.Equal(g, want) {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}

// TestBenchPeaks: calculate_metrics()'s peaks by hand. Two requests of 5
// tokens, a TPOT of 0.5 s: tokens at 0.5, 1, 1.5, 2, 2.5 s (the first) and
// 1.2, 1.7, 2.2, 2.7, 3.2 s (the second), and a one-token request's at
// 2.6 s: 1-s buckets from the first start 0 hold 1, 4, 5, 1 tokens. A
// failed request counts in neither figure. The first ends at 2.5 s as the
// one-token request arrives: at most 2 in flight.
func TestBenchPeaks(t *testing.T) {
	ms := int64(1e6)
	recs := []Record{
		{ArrivalNs: 0, FirstTokenNs: 500 * ms, FinishNs: 2500 * ms, OutputTokens: 5, Status: Completed},
		{ArrivalNs: 700 * ms, FirstTokenNs: 1200 * ms, FinishNs: 3200 * ms, OutputTokens: 5, Status: Completed},
		{ArrivalNs: 2500 * ms, FirstTokenNs: 2600 * ms, FinishNs: 2700 * ms, OutputTokens: 90, Status: Failed},
		{ArrivalNs: 2500 * ms, FirstTokenNs: 2600 * ms, FinishNs: 2600 * ms, OutputTokens: 1, Status: Completed},
	}
	tokens, concurrent := benchPeaks(recs)
	if tokens != 5 || concurrent != 2 {
		t.Errorf("peaks %g tokens/s, %d requests; want 5 and 2", tokens, concurrent)
	}
	if tokens, concurrent := benchPeaks(recs[2:3]); tokens != 0 || concurrent != 0 {
		t.Errorf("no completed request: peaks %g, %d; want 0, 0", tokens, concurrent)
	}
}

// vllmResultKeys are the keys of the JSON `vllm bench serve --save-result
// --save-detailed --percentile-metrics ttft,tpot,itl,e2el` writes for a
// generation benchmark without ramp-up, probes, speculative or diffusion
// decoding, transcribed from vllm/benchmarks/serve.py (commit 009e6d4 of
// vllm-project/vllm), each with the kind of JSON value vLLM writes there
// and where.
var vllmResultKeys = []struct{ key, kind, source string }{
	{"date", "string", "main(): result_json, setup: datetime.now() as %Y%m%d-%H%M%S"},
	{"endpoint_type", "string", "main(): result_json, setup"},
	{"backend", "string", "main(): result_json, setup"},
	{"label", "string", "main(): result_json, setup"},
	{"model_id", "string", "main(): result_json, setup"},
	{"tokenizer_id", "string", "main(): result_json, setup"},
	{"num_prompts", "number", "main(): result_json, setup"},
	{"request_rate", "number|string", `main(): result_json, traffic ("inf" when infinite)`},
	{"burstiness", "number|string", "main(): result_json, traffic"},
	{"max_concurrency", "number|null", "main(): result_json, traffic"},
	{"duration", "number", "benchmark(): result"},
	{"completed", "number", "benchmark(): result"},
	{"failed", "number", "benchmark(): result"},
	{"total_input_tokens", "number", "benchmark(): result"},
	{"total_output_tokens", "number", "benchmark(): result"},
	{"request_throughput", "number", "benchmark(): result"},
	{"request_goodput", "number|null", "benchmark(): result (None without --goodput)"},
	{"output_throughput", "number", "benchmark(): result"},
	{"total_token_throughput", "number", "benchmark(): result"},
	{"input_lens", "list", "benchmark(): result"},
	{"output_lens", "list", "benchmark(): result"},
	{"ttfts", "list", "benchmark(): result"},
	{"itls", "list", "benchmark(): result"},
	{"latencies", "list", "benchmark(): result"},
	{"start_times", "list", "benchmark(): result"},
	{"queue_times", "list", "benchmark(): result"},
	{"generated_texts", "list", "benchmark(): result"},
	{"errors", "list", "benchmark(): result"},
	{"max_output_tokens_per_s", "number", "benchmark(): result, from calculate_metrics()"},
	{"max_concurrent_requests", "number", "benchmark(): result, from calculate_metrics()"},
	{"rtfx", "number", "benchmark(): result"},
}

// TestBenchJSONKeys: the file holds exactly vLLM's keys, each with the
// kind of value vLLM writes there: vllmResultKeys, and the mean, median,
// std and p99 of each percentile metric (benchmark(): process_one_metric).
func TestBenchJSONKeys(t *testing.T) {
	recs := []Record{{ArrivalNs: 0, FirstTokenNs: 1e8, FinishNs: 5e8, PromptTokens: 10, OutputTokens: 5, Status: Completed}}
	s := Summarize(recs, nil, RunInfo{})
	var b bytes.Buffer
	if err := WriteBenchJSON(&b, recs, nil, s, BenchMeta{Label: "l", Model: "m", RequestRate: 2, Burstiness: math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, k := range vllmResultKeys {
		want[k.key] = k.kind
	}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, stat := range []string{"mean", "median", "std", "p99"} {
			want[stat+"_"+m+"_ms"] = "number"
		}
	}
	for k, kind := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("no %q", k)
		} else if !strings.Contains(kind, jsonKind(v)) {
			t.Errorf("%s = %v: a %s, vLLM writes a %s", k, v, jsonKind(v), kind)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%q is no key vLLM writes", k)
		}
	}
	if got["burstiness"] != "inf" || got["request_goodput"] != nil || got["max_concurrency"] != nil {
		t.Errorf("burstiness %v, request_goodput %v, max_concurrency %v; want inf, null, null",
			got["burstiness"], got["request_goodput"], got["max_concurrency"])
	}
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	}
	return "object"
}

// TestHistogramStd: exact where buckets are 1 ns wide.
func TestHistogramStd(t *testing.T) {
	var h Histogram
	for _, v := range []int64{10, 20, 30} {
		h.Add(v)
	}
	if got, want := h.Std(), math.Sqrt(200.0/3); math.Abs(got-want) > 1e-9 {
		t.Errorf("std %g, want %g", got, want)
	}
}
