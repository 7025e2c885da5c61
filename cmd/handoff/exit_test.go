package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Overrides of the quickstart for the exit-status tests: a short run, and
// decoders too small for the longest of its requests.
var (
	shortRun   = []string{"--set", "workload.synthetic.requests=40"}
	dropsSome  = []string{"--set", "workload.synthetic.requests=40", "--set", "pools.decode.engine.max_model_len=2000"}
	calibDrops = []string{"--set", "pools.vllm.engine.max_model_len=300"}
)

// traceScenario writes a one-pool scenario replaying an Azure trace of
// the given rows (after the header) and returns its path.
func traceScenario(t *testing.T, name string, rows ...string) string {
	dir := t.TempDir()
	write(t, dir, name+".csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"+strings.Join(rows, ""))
	write(t, dir, name+".yaml", "name: "+name+"\nmodel: llama-3.1-8b\nslo: {ttft: 1s, tpot: 100ms}\n"+
		"workload:\n  trace: {format: azure, path: "+name+".csv}\npools:\n  - {name: p, hardware: h100-sxm}\n")
	return filepath.Join(dir, name+".yaml")
}

// TestExitStatus holds every command to the exit statuses of exit.go: 0
// when every request was served, 2 when the command finished but dropped
// some, 1 for a workload with no requests (in a sweep: when every point
// failed) or any other error; anything but 0 with one line on stderr.
func TestExitStatus(t *testing.T) {
	empty := traceScenario(t, "empty")
	long := traceScenario(t, "long", "2023-11-16 18:17:03.97,480,10\n", "2023-11-16 18:17:04.03,300000,8\n")
	sweep := func(extra ...string) []string {
		return append([]string{"sweep", quickstart, "-o", filepath.Join(t.TempDir(), "sw"), "--no-plots",
			"--vary", "pools.decode.count=1,2"}, extra...)
	}
	dropped := sweep(dropsSome...)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"run", append([]string{"run", quickstart}, shortRun...), 0, ""},
		{"run drops", append([]string{"run", quickstart}, dropsSome...), 2, "requests could not be served"},
		{"run drops from a trace", []string{"run", long}, 2,
			"long.csv: 1 of 2 requests could not be served; the first, request 1 (arrival 0.060000 s): too long"},
		{"run no requests", []string{"run", empty}, 1, "empty.csv: the workload has no requests"},
		{"sweep", sweep(shortRun...), 0, ""},
		{"sweep drops", dropped, 2, "2 of 2 points left requests unserved (dropped, or failed on a locked-up instance); the first, 0000-"},
		{"merge drops", []string{"merge", "--no-plots", dropped[3]}, 2, "2 of 2 points left requests unserved"},
		{"goodput", append([]string{"goodput", quickstart, "--tolerance", "0.5"}, shortRun...), 0, ""},
		{"goodput drops", append([]string{"goodput", quickstart, "--tolerance", "0.5"}, dropsSome...), 2,
			"runs left requests unserved; at "},
		{"plan", append([]string{"plan", quickstart, "--target-rate", "5", "--max-count", "1"}, shortRun...), 0, ""},
		{"plan drops", append([]string{"plan", quickstart, "--target-rate", "5", "--max-count", "1", "--target", "0.5"},
			dropsSome...), 2, "1 of 1 fleets left requests unserved; with prefill 1×h100-sxm/tp1 + decode 1×h100-sxm/tp1"},
		{"sweep no requests", []string{"sweep", empty, "-o", filepath.Join(t.TempDir(), "e"), "--no-plots",
			"--vary", "pools.p.count=1,2"}, 1, "all 2 points failed; the first: sweep point 0000-"},
		{"validate", []string{"validate", quickstart}, 0, ""},
		{"catalog", []string{"catalog", "models"}, 0, ""},
		{"plot", []string{"plot", dropped[3]}, 0, ""},
		{"plot nothing", []string{"plot", t.TempDir()}, 1, "no results.csv (a sweep) or summary.json (a run)"},
		{"calibrate", []string{"calibrate", "--dir", "../../scenarios/calibration", "-o", filepath.Join(t.TempDir(), "c.md")}, 0, ""},
		{"calibrate drops", append([]string{"calibrate", "--pd=false", "--dir", "../../scenarios/calibration",
			"-o", filepath.Join(t.TempDir(), "c.md")}, calibDrops...), 2, "requests could not be served"},
		{"calibrate no requests", []string{"calibrate", "--pd=false", "--dir", "../../scenarios/calibration", "-o", filepath.Join(t.TempDir(), "c.md"),
			"--set", "workload.shared_prefix.stages=[{duration: 1ms, rate: 1/s}]"}, 1, "the workload has no requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, stderr)
			}
			if tt.code == 0 {
				return
			}
			if !strings.HasPrefix(stderr, "handoff: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q: want one line containing %q", stderr, tt.want)
			}
		})
	}
}
