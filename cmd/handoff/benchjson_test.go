package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
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

// TestBenchJSONTraffic: the traffic keys are the scenario's: the arrival
// rate configured, the gamma shape of its gaps as burstiness (1/cv²; "inf"
// for constant gaps), and the date --bench-date gives (by default the
// fixed epoch, so that two runs write the same bytes).
func TestBenchJSONTraffic(t *testing.T) {
	tests := []struct {
		sets      []string
		date      string
		rate      any
		burstines any
	}{
		{nil, "", 20.0, 1.0},
		{[]string{"workload.synthetic.arrival.process=gamma", "workload.synthetic.arrival.cv=2"}, "", 20.0, 0.25},
		{[]string{"workload.synthetic.arrival.process=constant", "workload.rate_scale=2"}, "20240315-120000", 40.0, "inf"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "bench.json")
		args := []string{"run", quickstart, "--bench-json", path, "--set", "workload.synthetic.requests=30"}
		for _, s := range tt.sets {
			args = append(args, "--set", s)
		}
		wantDate := defaultBenchDate
		if tt.date != "" {
			args, wantDate = append(args, "--bench-date", tt.date), tt.date
		}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.sets, code, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal(readFile(t, path), &got); err != nil {
			t.Fatal(err)
		}
		if got["request_rate"] != tt.rate || got["burstiness"] != tt.burstines || got["date"] != wantDate {
			t.Errorf("%v: request_rate %v, burstiness %v, date %v; want %v, %v, %v", tt.sets,
				got["request_rate"], got["burstiness"], got["date"], tt.rate, tt.burstines, wantDate)
		}
	}
}

// TestBenchDateFlag: a --bench-date not in vLLM's format is refused.
func TestBenchDateFlag(t *testing.T) {
	code, _, stderr := runCLI(t, "run", quickstart, "--bench-json", filepath.Join(t.TempDir(), "b.json"),
		"--bench-date", "2025-01-01")
	if code != 1 || !strings.Contains(stderr, "--bench-date") {
		t.Errorf("exit %d, stderr %q; want 1 and an error naming --bench-date", code, stderr)
	}
}
