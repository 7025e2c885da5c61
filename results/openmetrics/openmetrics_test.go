package openmetrics

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"handoff/results"
)

// oneRequest is a completed request on engine 0 (its decoder): arrival at
// 0.2 s, 0.1 s in the router and prefill queues, first token at 0.7 s
// (0.05 s of it the frontend), 5 tokens to its finish at 2.7 s: tokens at
// 0.7, 1.2, 1.7, 2.2, 2.7 s, TPOT 0.5 s.
func oneRequest() results.Record {
	r := results.Record{ArrivalNs: 200e6, FirstTokenNs: 700e6, FinishNs: 2700e6, PromptTokens: 100, OutputTokens: 5,
		PrefillInstance: 1, DecodeInstance: 0, Status: results.Completed}
	r.Time[results.TRouter], r.Time[results.TPrefillQueue], r.Time[results.TFrontend] = 40e6, 60e6, 50e6
	return r
}

func write(t *testing.T, r *Recorder) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b, "m"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRequestByHand: a request's observations land on the grid points
// (1 s apart) where vLLM would have made them, as cumulative series.
func TestRequestByHand(t *testing.T) {
	r := NewRecorder([]Engine{{"d-0", "d", "decode"}, {"p-0", "p", "prefill"}}, 1e9, 100)
	rec := oneRequest()
	r.Record(&rec)
	r.Gauges(0, 5e8, []Sample{{AtNs: 0}, {AtNs: 5e8, Preemptions: 2}, {AtNs: 1e9, Running: 1, KVUsed: 0.25},
		{AtNs: 15e8, Preemptions: 1}, {AtNs: 2e9, Running: 1}, {AtNs: 25e8}, {AtNs: 3e9, Waiting: 3}})
	out := write(t, r)
	labels := `{model_name="m",engine="d-0",pool="d",role="decode"`
	for _, want := range []string{
		// The timeline's 0.5 s samples off the 1 s grid add only their preemptions.
		"vllm:num_requests_running" + labels + "} 1 1735689601\n",
		"vllm:kv_cache_usage_perc" + labels + "} 0.25 1735689601\n",
		"vllm:num_requests_waiting" + labels + "} 3 1735689603\n",
		"vllm:num_preemptions_total" + labels + "} 2 1735689601\n",
		"vllm:num_preemptions_total" + labels + "} 3 1735689602\n",
		// Prompt and first token in (0, 1 s]; tokens at 1.2, 1.7 in (1, 2]; 2.2, 2.7 in (2, 3].
		"vllm:prompt_tokens_total" + labels + "} 100 1735689601\n",
		"vllm:generation_tokens_total" + labels + "} 1 1735689601\n",
		"vllm:generation_tokens_total" + labels + "} 3 1735689602\n",
		"vllm:generation_tokens_total" + labels + "} 5 1735689603\n",
		// TTFT 0.5 s: in le 0.5, not in le 0.25.
		"vllm:time_to_first_token_seconds_bucket" + labels + `,le="0.25"} 0 1735689601` + "\n",
		"vllm:time_to_first_token_seconds_bucket" + labels + `,le="0.5"} 1 1735689601` + "\n",
		// Four gaps of 0.5 s, two by 2 s and all by 3 s.
		"vllm:inter_token_latency_seconds_count" + labels + "} 2 1735689602\n",
		"vllm:inter_token_latency_seconds_sum" + labels + "} 2 1735689603\n",
		"vllm:inter_token_latency_seconds_bucket" + labels + `,le="0.4"} 0 1735689603` + "\n",
		// Finished at 2.7 s: e2e 2.5 s, queue 0.1, prefill 0.5 − 0.05 − 0.1 = 0.35, decode 2.
		"vllm:request_success_total" + labels + `,finished_reason="length"} 0 1735689602` + "\n",
		"vllm:request_success_total" + labels + `,finished_reason="length"} 1 1735689603` + "\n",
		"vllm:e2e_request_latency_seconds_sum" + labels + "} 2.5 1735689603\n",
		"vllm:request_queue_time_seconds_sum" + labels + "} 0.1 1735689603\n",
		"vllm:request_prefill_time_seconds_sum" + labels + "} 0.35 1735689603\n",
		"vllm:request_decode_time_seconds_sum" + labels + "} 2 1735689603\n",
		"vllm:request_inference_time_seconds_sum" + labels + "} 2.35 1735689603\n",
		"vllm:request_time_per_output_token_seconds_sum" + labels + "} 0.5 1735689603\n",
		// The prefiller served it too, but it is counted once, on its decoder.
		`vllm:request_success_total{model_name="m",engine="p-0",pool="p",role="prefill",finished_reason="length"} 0 1735689603` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q", want)
		}
	}
	if !strings.HasSuffix(out, "# EOF\n") {
		t.Error("no # EOF at the end")
	}
}

// TestCoarseningIsInvisible: a grid that coarsens as records come (a
// small budget) writes what a grid that was coarse from the start writes,
// whatever order the records come in.
func TestCoarseningIsInvisible(t *testing.T) {
	engines := []Engine{{"d-0", "d", "decode"}}
	recs := make([]results.Record, 40)
	for i := range recs {
		r := oneRequest()
		shift := int64(i) * 731e6
		r.ArrivalNs, r.FirstTokenNs, r.FinishNs = r.ArrivalNs+shift, r.FirstTokenNs+shift, r.FinishNs+shift+int64(i%7)*1e8
		r.OutputTokens = int32(1 + i%9)
		recs[i] = r
	}
	small := NewRecorder(engines, 5e8, 8) // 40 requests over 32 s: a 0.5 s grid coarsens to 8 s
	for i := range recs {
		small.Record(&recs[i])
	}
	if small.IntervalNs() != 8e9 {
		t.Fatalf("interval %d ns, want 8 s", small.IntervalNs())
	}
	coarse := NewRecorder(engines, 8e9, 1000)
	for i := len(recs) - 1; i >= 0; i-- {
		coarse.Record(&recs[i])
	}
	sameLines(t, write(t, small), write(t, coarse))
	if n := small.points(); n > 8 {
		t.Errorf("%d points, budget 8", n)
	}
}

// TestRejectedNotCounted: a request no engine finished is in no series.
func TestRejectedNotCounted(t *testing.T) {
	r := NewRecorder([]Engine{{"d-0", "d", "decode"}}, 1e9, 100)
	rec := oneRequest()
	rec.Status, rec.OutputTokens, rec.FirstTokenNs = results.Rejected, 0, 0
	r.Record(&rec)
	if out := write(t, r); strings.Contains(out, "} 1 ") {
		t.Errorf("a rejected request counted:\n%s", out)
	}
}

// sameLines fails unless a and b have the same lines, but for values
// that differ in the last bits (sums added in another order).
func sameLines(t *testing.T, a, b string) {
	t.Helper()
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		t.Fatalf("%d lines and %d", len(la), len(lb))
	}
	for i := range la {
		if la[i] == lb[i] {
			continue
		}
		fa, fb := strings.Fields(la[i]), strings.Fields(lb[i])
		if len(fa) != 3 || len(fb) != 3 || fa[0] != fb[0] || fa[2] != fb[2] {
			t.Fatalf("line %d:\n%s\n%s", i+1, la[i], lb[i])
		}
		va, _ := strconv.ParseFloat(fa[1], 64)
		vb, _ := strconv.ParseFloat(fb[1], 64)
		if math.Abs(va-vb) > 1e-12*math.Abs(va) {
			t.Fatalf("line %d:\n%s\n%s", i+1, la[i], lb[i])
		}
	}
}
