package results

import (
	"bytes"
	"encoding/json"
	"math"
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
	if err := WriteBenchJSON(&b, recs, &itl, s, BenchMeta{Label: "l", Model: "m", RequestRate: math.Inf(1), MaxConcurrency: 4}); err != nil {
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
