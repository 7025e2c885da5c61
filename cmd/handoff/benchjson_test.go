package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestRunWritesBenchJSON: --bench-json writes vLLM's result keys, its
// counts agreeing with the summary's.
func TestRunWritesBenchJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bench.json")
	code, _, stderr := runCLI(t, "run", quickstart, "-o", filepath.Join(dir, "out"), "--bench-json", path,
		"--set", "workload.synthetic.requests=200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var bench, sum map[string]any
	if err := json.Unmarshal(readFile(t, path), &bench); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "out", "summary.json")), &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "output_throughput", "total_token_throughput", "input_lens",
		"output_lens", "ttfts", "itls", "errors", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms",
		"mean_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "p99_itl_ms", "mean_e2el_ms", "model_id", "request_rate"} {
		if _, ok := bench[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	counts := sum["requests"].(map[string]any)
	if bench["completed"] != counts["completed"] || bench["num_prompts"] != counts["total"] {
		t.Errorf("completed %v of %v, summary %v of %v", bench["completed"], bench["num_prompts"],
			counts["completed"], counts["total"])
	}
	ttft := sum["ttft_s"].(map[string]any)
	if got, want := bench["mean_ttft_ms"].(float64), 1e3*ttft["mean"].(float64); got-want > 1e-6 || want-got > 1e-6 {
		t.Errorf("mean TTFT %g ms, summary %g", got, want)
	}
}

// TestRunFilesInOutDir: --bench-json and --trace may name files in the
// folder -o creates, before it exists.
func TestRunFilesInOutDir(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	bench, trace := filepath.Join(out, "b.json"), filepath.Join(out, "t.json")
	code, _, stderr := runCLI(t, "run", quickstart, "-o", out, "--bench-json", bench, "--trace", trace,
		"--set", "workload.synthetic.requests=20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{bench, trace, filepath.Join(out, "summary.json")} {
		readFile(t, f)
	}
}
