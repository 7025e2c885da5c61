package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunWritesMetrics: --metrics openmetrics writes DIR/metrics.om, the
// same bytes on every run and whether the run streams its records or
// keeps them (--bench-json); the last point of its counters adds up to
// the summary's completed requests and output tokens.
func TestRunWritesMetrics(t *testing.T) {
	dir := t.TempDir()
	var files [3][]byte
	for i, extra := range [][]string{nil, nil, {"--bench-json", filepath.Join(dir, "b.json")}} {
		out := filepath.Join(dir, strconv.Itoa(i))
		args := append([]string{"run", quickstart, "-o", out, "--metrics", "openmetrics",
			"--set", "workload.synthetic.requests=200"}, extra...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		files[i] = readFile(t, filepath.Join(out, "metrics.om"))
	}
	if !bytes.Equal(files[0], files[1]) || !bytes.Equal(files[0], files[2]) {
		t.Errorf("metrics.om differs between runs (%d, %d and %d bytes)", len(files[0]), len(files[1]), len(files[2]))
	}
	var sum struct {
		Requests   struct{ Completed float64 } `json:"requests"`
		Throughput struct {
			OutputTokensPerS float64 `json:"output_tokens_per_s"`
		} `json:"throughput"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "0", "summary.json")), &sum); err != nil {
		t.Fatal(err)
	}
	last := lastValues(files[0])
	if got := last[`vllm:request_success_total|length`]; got != sum.Requests.Completed {
		t.Errorf("request_success_total{finished_reason=\"length\"} adds up to %g, the summary has %g completed", got, sum.Requests.Completed)
	}
	if last["vllm:generation_tokens_total|"] == 0 || last["vllm:e2e_request_latency_seconds_count|"] != sum.Requests.Completed {
		t.Errorf("generation tokens %g, e2e count %g; want > 0 and %g", last["vllm:generation_tokens_total|"],
			last["vllm:e2e_request_latency_seconds_count|"], sum.Requests.Completed)
	}
}

// lastValues sums over engines each series' last value in an OpenMetrics
// file, keyed by metric name and finished_reason.
func lastValues(om []byte) map[string]float64 {
	last := map[string]float64{} // series → its last value
	sc := bufio.NewScanner(bytes.NewReader(om))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		last[f[0]], _ = strconv.ParseFloat(f[1], 64)
	}
	sums := map[string]float64{}
	for series, v := range last {
		name, labels, _ := strings.Cut(series, "{")
		reason := ""
		if _, r, ok := strings.Cut(labels, `finished_reason="`); ok {
			reason, _, _ = strings.Cut(r, `"`)
		}
		if !strings.Contains(labels, `,le="`) {
			sums[name+"|"+reason] += v
		}
	}
	return sums
}

// TestMetricsFlag: --metrics takes one format and needs -o.
func TestMetricsFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", "prometheus", "-o", t.TempDir()}, "openmetrics"},
		{[]string{"--metrics", "openmetrics"}, "-o"},
	} {
		code, _, stderr := runCLI(t, append([]string{"run", quickstart}, tt.args...)...)
		if code != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want 1 and an error naming %s", tt.args, code, stderr, tt.want)
		}
	}
}
