package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
)

const quickstart = "../../scenarios/quickstart.yaml"

// runCLI runs the command line and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunWritesOutputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "run", quickstart, "-o", dir, "--set", "workload.synthetic.requests=200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "quickstart") || stderr != "" {
		t.Errorf("stdout %q lacks the summary table, or stderr %q is not empty", stdout, stderr)
	}

	var sum map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "summary.json")), &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, k := range []string{"scenario", "seed", "requests", "ttft_s", "tpot_s", "itl_s", "e2e_s", "throughput",
		"slo", "preemptions", "sim_time_s", "wall_time_s", "events"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	var counts results.RequestCounts
	if err := json.Unmarshal(sum["requests"], &counts); err != nil || counts.Total != 200 {
		t.Errorf("requests = %+v (%v), want a total of 200", counts, err)
	}

	lines := strings.Split(strings.TrimSuffix(string(readFile(t, filepath.Join(dir, "requests.csv"))), "\n"), "\n")
	if lines[0] != results.RequestsCSVHeader || len(lines) != 201 {
		t.Errorf("requests.csv: header %q and %d rows, want the header and 200 rows", lines[0], len(lines)-1)
	}

	usage := newRunCmd(io.Discard, io.Discard, nil).Flags().Lookup("out").Usage
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.Contains(usage, e.Name()) {
			t.Errorf("run -o wrote %s, which its help (%q) does not name", e.Name(), usage)
		}
	}

	code, stdout, stderr = runCLI(t, "validate", filepath.Join(dir, "scenario.yaml"))
	if code != 0 || !strings.Contains(stdout, "ok (4 instances, 4 GPUs") {
		t.Errorf("validate of the effective scenario: exit %d, %q %q", code, stdout, stderr)
	}
}

func TestRunSeed(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "run", quickstart, "-o", dir, "--seed", "7",
		"--set", "workload.synthetic.requests=20"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum results.Summary
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "summary.json")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Seed != 7 {
		t.Errorf("summary seed = %d, want 7", sum.Seed)
	}
	if !bytes.Contains(readFile(t, filepath.Join(dir, "scenario.yaml")), []byte("\nseed: 7\n")) {
		t.Error("scenario.yaml does not record seed 7")
	}
}

// TestBadInputExits checks that bad input of every kind ends with exit 1
// and one line on stderr, never a panic.
func TestBadInputExits(t *testing.T) {
	dir := t.TempDir()
	qs := string(readFile(t, quickstart))
	write(t, dir, "misspelt.yaml", strings.Replace(qs, "block_size: 16", "blok_size: 16", 1))
	write(t, dir, "bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,480,10\n2023-11-16 18:17:04.03,31x8,8\n")
	trace := "name: tr\nmodel: llama-3.1-8b\nslo: {ttft: 1s, tpot: 100ms}\nworkload:\n  trace: {format: azure, path: %s}\n" +
		"pools:\n  - {name: p, hardware: h100-sxm}\n"
	write(t, dir, "bad-trace.yaml", strings.Replace(trace, "%s", "bad.csv", 1))
	at := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"missing file", []string{"run", at("nope.yaml")}, []string{"nope.yaml", "no such file"}},
		{"misspelt key", []string{"run", at("misspelt.yaml")},
			[]string{"misspelt.yaml:20: field pools[0].engine.blok_size: unknown field (did you mean block_size?)"}},
		{"validate misspelt key", []string{"validate", at("misspelt.yaml")}, []string{"misspelt.yaml:20:"}},
		{"unknown set path", []string{"run", quickstart, "--set", "pools.decode.cont=1"},
			[]string{`--set pools.decode.cont: no field "cont" here (known: name, role, count`}},
		{"malformed set", []string{"run", quickstart, "--set", "seed"}, []string{`--set "seed": want path=value`}},
		{"type error after set", []string{"run", quickstart, "--set", "pools.decode.count=many"},
			[]string{`field pools[1].count: want an integer, got "many" (from --set pools.decode.count=many)`}},
		{"model does not fit", []string{"validate", quickstart, "--set", "model=llama-3.1-405b"},
			[]string{"quickstart.yaml:19: field pools[0].tp: llama-3.1-405b", "does not fit"}},
		{"malformed trace line", []string{"run", at("bad-trace.yaml")}, []string{at("bad.csv") + `:3: ContextTokens: "31x8"`}},
		{"unknown flag", []string{"run", quickstart, "--sed", "3"}, []string{"unknown flag: --sed"}},
		{"missing argument", []string{"run"}, []string{"accepts 1 arg(s), received 0"}},
		{"unknown subcommand", []string{"runn", quickstart}, []string{`unknown command "runn" for "handoff" Did you mean this? run`}},
		{"unknown catalog", []string{"catalog", "gpus"}, []string{`invalid argument "gpus"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.HasPrefix(stderr, "handoff: ") || strings.Count(stderr, "\n") != 1 ||
				strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
				t.Errorf("stderr is not one line starting \"handoff: \":\n%s", stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q\nlacks %q", stderr, w)
				}
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	for _, tt := range []struct {
		what string
		want []string
	}{
		{"hardware", []string{"ACCELERATOR", "h100-sxm", "LINK", "nvlink4"}},
		{"models", []string{"MODEL", "llama-3.1-70b", "llama-3.1-8b"}},
	} {
		code, stdout, stderr := runCLI(t, "catalog", tt.what)
		if code != 0 {
			t.Errorf("catalog %s: exit %d: %s", tt.what, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("catalog %s lacks %q:\n%s", tt.what, w, stdout)
			}
		}
	}
}

// TestRunFlags checks flag parsing alone: the options that reach runF.
func TestRunFlags(t *testing.T) {
	var got *runOptions
	cmd := newRunCmd(&bytes.Buffer{}, &bytes.Buffer{}, func(o *runOptions, _ io.Writer) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "-o", "out", "--seed", "42", "--set", "a.b=1", "--set", "c=x=y"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := runOptions{scenario: "s.yaml", outDir: "out", seed: 42, sets: []string{"a.b=1", "c=x=y"}}
	if got == nil || got.scenario != want.scenario || got.outDir != want.outDir || got.seed != want.seed ||
		strings.Join(got.sets, "|") != strings.Join(want.sets, "|") {
		t.Errorf("options = %+v, want %+v", got, want)
	}

	cmd = newRunCmd(&bytes.Buffer{}, &bytes.Buffer{}, func(*runOptions, io.Writer) error { return nil })
	cmd.SetArgs([]string{"s.yaml", "--seed", "-1"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err == nil {
		t.Error("--seed -1 accepted")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestValidateDataParallel: validate counts a data-parallel instance once,
// its ranks as engines, and sizes the KV pool per rank.
func TestValidateDataParallel(t *testing.T) {
	code, stdout, stderr := runCLI(t, "validate", "../../scenarios/deepseek-r1-wide-ep-h200-ib.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ok (3 instances, 34 engines, 48 GPUs", "per data-parallel rank (32 ranks an instance, 1 device(s) each)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("validate output lacks %q:\n%s", want, stdout)
		}
	}
}
