package openmetrics

// Epoch is the Unix time, in s, that simulated time 0 is written at:
// 2025-01-01T00:00:00Z.
const Epoch = 1735689600

// Histogram buckets, from vllm/v1/metrics/loggers.py
// (PrometheusStatLogger.__init__).
var (
	// ttftBuckets: vllm:time_to_first_token_seconds.
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	// tokenBuckets: vllm:inter_token_latency_seconds and
	// vllm:request_time_per_output_token_seconds.
	tokenBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
		0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	// requestBuckets: request_latency_buckets, shared by the e2e, queue,
	// inference, prefill and decode times.
	requestBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30,
		40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

// The histograms, in the order they are written.
const (
	hTTFT      = iota // time_to_first_token_seconds: at the first token, from arrival
	hITL              // inter_token_latency_seconds: every gap between two tokens
	hTPOT             // request_time_per_output_token_seconds: a finished request's decode time / (tokens − 1), 0 for one token
	hE2E              // e2e_request_latency_seconds: arrival to finish
	hQueue            // request_queue_time_seconds: arrival at the engine to first scheduled
	hInference        // request_inference_time_seconds: first scheduled to last token
	hPrefill          // request_prefill_time_seconds: first scheduled to first token
	hDecode           // request_decode_time_seconds: first token to last
	numHists
)

// hists names each histogram family, its help and buckets.
var hists = [numHists]struct {
	name, help string
	buckets    []float64
}{
	hTTFT:      {"vllm:time_to_first_token_seconds", "Time to first token, s.", ttftBuckets},
	hITL:       {"vllm:inter_token_latency_seconds", "Gap between two output tokens of a request, s.", tokenBuckets},
	hTPOT:      {"vllm:request_time_per_output_token_seconds", "A finished request's mean gap between output tokens, s.", tokenBuckets},
	hE2E:       {"vllm:e2e_request_latency_seconds", "A finished request's arrival to finish, s.", requestBuckets},
	hQueue:     {"vllm:request_queue_time_seconds", "A finished request's wait before it was first scheduled, s.", requestBuckets},
	hInference: {"vllm:request_inference_time_seconds", "A finished request's first scheduling to its last token, s.", requestBuckets},
	hPrefill:   {"vllm:request_prefill_time_seconds", "A finished request's first scheduling to its first token, s.", requestBuckets},
	hDecode:    {"vllm:request_decode_time_seconds", "A finished request's first token to its last, s.", requestBuckets},
}

// finishReasons are vLLM's FinishReason values as it labels
// vllm:request_success (vllm/v1/engine/__init__.py: FINISH_REASON_STRINGS);
// vLLM creates the series of every reason for every engine.
var finishReasons = [...]string{"stop", "length", "abort", "error", "repetition"}

// The reasons a handoff request finishes with: a completed one ran to its
// output length (max_tokens, as a benchmark that ignores EOS); an abandoned
// one was aborted when its client gave up; a failed one was lost to a
// fault (a crash, a lock-up), vLLM's internal error.
const (
	reasonLength = 1
	reasonAbort  = 2
	reasonError  = 3
)

// The gauges and plain counters, in the order they are written
// (histograms follow).
var (
	gaugeRunning = family{"vllm:num_requests_running", "gauge", "Requests in the running set (model execution batches)."}
	gaugeWaiting = family{"vllm:num_requests_waiting", "gauge", "Requests waiting to be scheduled, preempted ones included."}
	gaugeKV      = family{"vllm:kv_cache_usage_perc", "gauge", "Share of KV cache blocks in use, 1 = all."}
	cntPreempt   = family{"vllm:num_preemptions", "counter", "Preemptions since the start."}
	cntPrompt    = family{"vllm:prompt_tokens", "counter", "Prompt tokens prefilled."}
	cntGen       = family{"vllm:generation_tokens", "counter", "Output tokens generated."}
	cntSuccess   = family{"vllm:request_success", "counter", "Requests finished, by finished_reason."}
)

// family is one metric family's metadata.
type family struct{ name, typ, help string }
