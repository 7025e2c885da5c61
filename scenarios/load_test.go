package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/scenarios/workload"
	"handoff/sim"
)

// base is a small valid scenario; the tests edit it by replacing text, so
// its line numbers matter: the comments give them.
const base = `name: t
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 50ms}
workload:
  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 10/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}
pools:
  - name: prefill
    role: prefill
    hardware: h100-sxm
    engine: {block_size: 16}
  - name: decode
    role: decode
    count: 2
    hardware: h100-sxm
`

// Lines of base: 1 name, 2 model, 3 slo, 4 workload, 5 synthetic,
// 6 requests, 7 arrival, 8 input_tokens, 9 output_tokens, 10 pools,
// 11 "- name: prefill", 12 role, 13 hardware, 14 engine, 15 "- name: decode",
// 16 role, 17 count, 18 hardware.

// edit returns base with old replaced by new, failing if old is absent.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("base has no %q", old)
	}
	return strings.Replace(base, old, new, 1)
}

// parseBuild parses doc as file and builds it: the error is the first of
// the two steps that failed.
func parseBuild(t *testing.T, doc, file string, sets ...Set) (*Loaded, *Built, error) {
	t.Helper()
	l, err := Parse([]byte(doc), file, sets...)
	if err != nil {
		return nil, nil, err
	}
	b, err := l.Build()
	if err != nil {
		return l, nil, err
	}
	t.Cleanup(func() { b.Close() })
	return l, b, nil
}

func TestBaseIsValid(t *testing.T) {
	_, b, err := parseBuild(t, base, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(b.Config.Instances); got != 3 {
		t.Errorf("instances = %d, want 3 (1 prefill + 2 decode)", got)
	}
}

// TestBadInput checks that each kind of bad input gives one error that
// names the file, the line and the field.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // substrings of the error, in any order
	}{
		{"misspelt key", edit(t, "{block_size: 16}", "{blok_size: 16}"),
			[]string{"t.yaml:14: field pools[0].engine.blok_size: unknown field (did you mean block_size?)"}},
		{"misspelt top-level key", base + "routr: {policy: round_robin}\n",
			[]string{"t.yaml:19: field routr: unknown field (did you mean router?)"}},
		{"unknown key far from any", base + "colour: blue\n",
			[]string{"t.yaml:19: field colour: unknown field (known: ", "router"}},
		{"wrong type", edit(t, "count: 2", "count: two"),
			[]string{`t.yaml:17: field pools[1].count: want an integer, got "two"`}},
		{"mapping for a scalar", edit(t, "count: 2", "count: {n: 2}"),
			[]string{"t.yaml:17: field pools[1].count: want an integer, got a mapping"}},
		{"duration without unit", edit(t, "ttft: 500ms", "ttft: 500"),
			[]string{"t.yaml:3: field slo.ttft: bad duration", "500"}},
		{"wrong unit", edit(t, "rate: 10/s", "rate: 10GB/s"),
			[]string{"t.yaml:7: field workload.synthetic.arrival.rate: bad rate"}},
		{"duplicate key", edit(t, "count: 2", "count: 2\n    count: 3"),
			[]string{"t.yaml:18: field pools[1].count: duplicate key (first defined at line 17)"}},
		{"syntax error", edit(t, "slo: {ttft: 500ms, tpot: 50ms}", "slo: {ttft: 500ms, tpot: 50ms"),
			[]string{"t.yaml:", "invalid YAML"}},
		{"empty", "# nothing\n", []string{"t.yaml: empty document"}},
		{"two documents", base + "---\nname: u\n", []string{"t.yaml:19: only one YAML document"}},
		{"missing name", strings.Replace(base, "name: t\n", "", 1), []string{"t.yaml", "field name: required"}},
		{"unknown role", edit(t, "role: prefill", "role: prefil"),
			[]string{`t.yaml:12: field pools[0].role: unknown role "prefil"`}},
		{"explicit zero count", edit(t, "count: 2", "count: 0"),
			[]string{"t.yaml:17: field pools[1].count: must be in [1, 16384], got 0"}},
		{"too many instances", edit(t, "count: 2", "count: 100000"),
			[]string{"t.yaml:17: field pools[1].count: must be in [1, 16384], got 100000"}},
		{"instances over all pools", edit(t, "count: 2", "count: 16384"),
			[]string{"t.yaml:17: field pools[1].count: the pools build more than 16384 instances (count × dp each, " +
				"an autoscaled pool at its max; 1 before this one, 16384 in it)"}},
		// Each data-parallel rank is an instance: 8,193 groups of 2 build
		// 16,386 of them.
		{"instances over all pools, counting dp ranks", strings.Replace(edit(t, "count: 2", "count: 8193\n    dp: 2\n    ep: 2"),
			"llama-3.1-8b", "gpt-oss-120b", 1),
			[]string{"t.yaml:17: field pools[1].count: the pools build more than 16384 instances (count × dp each, " +
				"an autoscaled pool at its max; 1 before this one, 16386 in it)"}},
		{"explicit zero block size", edit(t, "{block_size: 16}", "{block_size: 0}"),
			[]string{"t.yaml:14: field pools[0].engine.block_size: must be positive, got 0"}},
		{"NaN memory utilization", edit(t, "{block_size: 16}", "{memory_utilization: .nan}"),
			[]string{"t.yaml:14: field pools[0].engine.memory_utilization: must be in (0, 1], got NaN"}},
		{"NaN rate scale", edit(t, "workload:\n", "workload:\n  rate_scale: .nan\n"),
			[]string{"t.yaml:5: field workload.rate_scale: must be in [1e-06, 1e+06], got NaN"}},
		{"infinite rate scale", edit(t, "workload:\n", "workload:\n  rate_scale: .inf\n"),
			[]string{"t.yaml:5: field workload.rate_scale: must be in [1e-06, 1e+06], got +Inf"}},
		{"rate scale too small", edit(t, "workload:\n", "workload:\n  rate_scale: 1e-300\n"),
			[]string{"t.yaml:5: field workload.rate_scale: must be in [1e-06, 1e+06], got 1e-300"}},
		{"mixed roles", edit(t, "role: decode", "role: colocated"),
			[]string{"t.yaml:16: field pools[1].role: colocated pools cannot be mixed with prefill pools (pools[0])"}},
		{"prefill without decode", edit(t, "role: decode", "role: prefill"),
			[]string{"t.yaml:12: field pools[0].role: a prefill pool needs a decode pool"}},
		{"block larger than memory", edit(t, "{block_size: 16}", "{block_size: 100000000}"),
			[]string{"t.yaml:14: field pools[0].engine.block_size: one KV block of 100000000 tokens", "does not fit"}},
		{"negative link latency", base + "link: {kind: nvlink4, latency: -1us}\n",
			[]string{`t.yaml:19: field link.latency: bad duration "-1us"`}},
		{"bandwidth in bits", base + "link: {kind: nvlink4, bandwidth: 400Gb}\n",
			[]string{`t.yaml:19: field link.bandwidth: bad bandwidth "400Gb"`}},
		{"negative step overhead", edit(t, "{block_size: 16}", "{block_size: 16}\n    step_time: {step_overhead: -1ms}"),
			[]string{`t.yaml:15: field pools[0].step_time.step_overhead: bad duration "-1ms"`}},
		{"workload field", edit(t, "requests: 10", "requests: -1"),
			[]string{"t.yaml:6: field workload.synthetic.requests: must be ≥ 0, got -1"}},
		{"several workload errors", edit(t, "value: 100}", "value: 100, values: [1], weights: [1]}"),
			[]string{"t.yaml:8: field workload.synthetic.input_tokens.values: not used by dist fixed"}},
		{"two workloads", edit(t, "workload:\n", "workload:\n  trace: {format: azure, path: x.csv}\n"),
			[]string{"t.yaml:4: field workload: give exactly one of synthetic, shared_prefix, trace, servegen or sessions (got 2)"}},
		{"unknown router policy", base + "router: {policy: random}\n",
			[]string{`t.yaml:19: field router.policy: unknown policy "random"`}},
		{"unknown hardware", edit(t, "hardware: h100-sxm", "hardware: h100-sxn"),
			[]string{`t.yaml:13: field pools[0].hardware:`, `unknown accelerator "h100-sxn"`, "h100-sxm"}},
		{"unknown model", edit(t, "model: llama-3.1-8b", "model: llama-3.1-8c"),
			[]string{`t.yaml:2: field model:`, `unknown model "llama-3.1-8c"`, "llama-3.1-8b"}},
		{"unknown link", base + "link: {kind: nvlink9}\n",
			[]string{`t.yaml:19: field link.kind:`, `"nvlink9"`}},
		// llama-3.1-70b holds 141.2 GB of weights; 0.9 × 80 GB = 72 GB.
		// The pool has no tp key, so the error points at the pool.
		{"model does not fit at tp 1", edit(t, "model: llama-3.1-8b", "model: llama-3.1-70b"),
			[]string{"t.yaml:11: field pools[0].tp: llama-3.1-70b", "does not fit in h100-sxm", "raise tp"}},
		{"missing profile file", edit(t, "{block_size: 16}", "{block_size: 16}\n    step_time: {model: polynomial}"),
			[]string{"t.yaml:15: field pools[0].step_time.file: required"}},
		{"missing trace file", strings.Replace(base, "  synthetic:\n    requests: 10\n    arrival: {process: poisson, rate: 10/s}\n"+
			"    input_tokens: {dist: fixed, value: 100}\n    output_tokens: {dist: fixed, value: 10}\n",
			"  trace: {format: azure, path: no-such.csv}\n", 1),
			[]string{"t.yaml:5: field workload.trace.path: open no-such.csv:", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refuses(t, tt.doc, tt.want...) })
	}
}

// refuses checks that doc, as file t.yaml, fails to load and build with
// an error holding each of want.
func refuses(t *testing.T, doc string, want ...string) {
	t.Helper()
	_, _, err := parseBuild(t, doc, "t.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	checkError(t, err, want...)
}

// checkError requires a one-line error containing every want.
func checkError(t *testing.T, err error, want ...string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans several lines:\n%s", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q\nlacks %q", msg, w)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "no-such.yaml"))
	if err == nil {
		t.Fatal("no error")
	}
	checkError(t, err, filepath.Join("testdata", "no-such.yaml"), "no such file")
}

// TestTraceRelativePath loads a scenario from another folder: its trace
// path resolves against the scenario's folder, and a malformed trace line
// is reported with the resolved file name, its line and column.
func TestTraceRelativePath(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "trace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Resolve(l.Workload.Trace.Path), filepath.Join("testdata", "traces", "ok.csv"); got != want {
		t.Errorf("Resolve = %q, want %q", got, want)
	}
	b, err := l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if n := countRequests(t, b.Config.Source); n != 3 {
		t.Errorf("trace gave %d requests, want 3", n)
	}

	bad := strings.Replace(readFile(t, "testdata/trace.yaml"), "ok.csv", "bad.csv", 1)
	l, err = Parse([]byte(bad), filepath.Join("testdata", "bad-trace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err = l.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var r sim.Request
	for {
		ok, err := b.Config.Source.Next(&r)
		if err != nil {
			var pe *workload.ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %v is not a *workload.ParseError", err)
			}
			checkError(t, err, filepath.Join("testdata", "traces", "bad.csv")+":3: ContextTokens:", `"31x8"`)
			return
		}
		if !ok {
			t.Fatal("malformed trace read to the end without an error")
		}
	}
}

func countRequests(t *testing.T, src sim.Source) int {
	t.Helper()
	n := 0
	var r sim.Request
	for {
		ok, err := src.Next(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return n
		}
		n++
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestShippedScenarios loads and builds every scenario in the repository.
func TestShippedScenarios(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	calib, _ := filepath.Glob(filepath.Join("calibration", "*.yaml"))
	perf, _ := filepath.Glob(filepath.Join("perf", "*.yaml"))
	for _, f := range append(append(files, calib...), perf...) {
		l, err := Load(f)
		if err == nil {
			var b *Built
			if b, err = l.Build(); err == nil {
				b.Close()
			}
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestIntegerFieldsRefuseDecimals checks that a decimal or an out-of-range
// value in an integer field is an error naming the field, wherever the
// field lives (workload, pools, seed, sweep and plan blocks, inline
// catalogs) and whether it comes from the file or from --set; yaml.v3
// alone would truncate it.
func TestIntegerFieldsRefuseDecimals(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		sets []string
		want string
	}{
		{"requests", edit(t, "requests: 10", "requests: 2.5"), nil,
			`t.yaml:6: field workload.synthetic.requests: want an integer, got "2.5"`},
		{"count", edit(t, "count: 2", "count: 2.7"), nil, `t.yaml:17: field pools[1].count: want an integer, got "2.7"`},
		{"seed above 2^64", "seed: 18446744073709551617\n" + base, nil,
			"t.yaml:1: field seed: want an integer in [0, 18446744073709551615], got 18446744073709551617"},
		{"sweep replicas", base + "sweep: {replicas: 2.5}\n", nil, `t.yaml:19: field sweep.replicas: want an integer, got "2.5"`},
		{"plan tp", base + "plan: {pools: {decode: {tp: [1, 1.5]}}}\n", nil,
			`t.yaml:19: field plan.pools.decode.tp[1]: want an integer, got "1.5"`},
		{"inline model", edit(t, "model: llama-3.1-8b", "model: tiny-llm") + tinyInline, nil, ""},
		{"inline model layers", edit(t, "model: llama-3.1-8b", "model: tiny-llm") +
			strings.Replace(tinyInline, "layers: 4", "layers: 4.5", 1), nil,
			`t.yaml:24: field catalog.models[0].layers: want an integer, got "4.5"`},
		{"--set count", base, []string{"pools.decode.count=2.7"},
			`t.yaml: field pools[1].count: want an integer, got "2.7" (from --set pools.decode.count=2.7)`},
		{"--set tp", base, []string{"pools.0.tp=1.5"},
			`t.yaml: field pools[0].tp: want an integer, got "1.5" (from --set pools.0.tp=1.5)`},
		{"--set seed", base, []string{"seed=1.9"}, `t.yaml: field seed: want an integer, got "1.9" (from --set seed=1.9)`},
		{"--set seed above 2^64", base, []string{"seed=18446744073709551616"},
			"t.yaml: field seed: want an integer in [0, 18446744073709551615], got 18446744073709551616 (from --set seed=18446744073709551616)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "t.yaml", mustSets(t, tt.sets...)...)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error %q\nwant  %q", err, tt.want)
			}
		})
	}
}

// TestTensorParallelChecks checks tp against the model's heads (vLLM's
// sharding rules) and, without a topology, against the accelerator's
// scale-up domain; a topology's domain_size replaces the latter.
func TestTensorParallelChecks(t *testing.T) {
	tp := func(n string) string { return edit(t, "count: 2\n", "count: 2\n    tp: "+n+"\n") }
	tests := []struct {
		name string
		doc  string
		sets []string
		want string // "" = builds
	}{
		{"tp 1000", tp("1000"), nil, "t.yaml:18: field pools[1].tp: llama-3.1-8b's 32 attention heads do not split evenly over 1000 ranks"},
		{"tp 3", tp("3"), nil, "t.yaml:18: field pools[1].tp: llama-3.1-8b's 32 attention heads do not split evenly over 3 ranks " +
			"(vLLM requires heads divisible by tp; legal tp: 1, 2, 4, 8, 16, 32)"},
		{"tp 6", tp("6"), nil, "t.yaml:18: field pools[1].tp: llama-3.1-8b's 32 attention heads do not split evenly over 6 ranks"},
		{"kv heads", edit(t, "model: llama-3.1-8b", "model: qwen2.5-7b"), []string{"pools.decode.tp=14"},
			"t.yaml: field pools[1].tp: qwen2.5-7b's 4 KV heads neither split evenly over 14 ranks nor replicate evenly on them"},
		{"tp 8", tp("8"), nil, ""},
		{"beyond the scale-up domain", tp("16"), nil, "t.yaml:18: field pools[1].tp: tp 16 spans more than one scale-up domain " +
			"of h100-sxm (8 devices on nvlink4): lower tp, or give a topology whose domain_size holds it"},
		{"trainium2 instance", strings.ReplaceAll(tp("16"), "h100-sxm", "trainium2"), nil, ""},
		{"beyond a trainium2 instance", strings.ReplaceAll(tp("32"), "h100-sxm", "trainium2"), nil,
			"field pools[1].tp: tp 32 spans more than one scale-up domain of trainium2 (16 devices on neuronlink-v3)"},
		{"topology domain holds it", topoBase, []string{"topology.domain_size=16", "pools.decode.tp=16"}, ""},
		{"topology domain too small", topoBase, []string{"pools.decode.tp=16"},
			"field pools[1].tp: an instance of 16 GPUs does not fit in a domain of 8"},
		{"heads with a topology", topoBase, []string{"topology.domain_size=16", "pools.decode.tp=12"},
			"field pools[1].tp: llama-3.1-8b's 32 attention heads do not split evenly over 12 ranks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseBuild(t, tt.doc, "t.yaml", mustSets(t, tt.sets...)...)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && err == nil:
				t.Fatal("no error")
			case tt.want != "":
				checkError(t, err, tt.want)
			}
		})
	}
}

// TestFilesAreCapped: a scenario or catalog file larger than 16 MiB (a
// device such as /dev/zero named by mistake) is refused at once, naming
// it, instead of being read whole.
func TestFilesAreCapped(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileBytes + 1); err != nil { // sparse: no 16 MiB written
		t.Fatal(err)
	}
	f.Close()
	_, err = Load(big)
	checkError(t, err, "scenario: "+big+": larger than 16 MiB: not a scenario or catalog file")
	_, _, err = parseBuild(t, base+"catalog: {files: ["+big+"]}\n", "t.yaml")
	checkError(t, err, "t.yaml:19: field catalog.files[0]: "+big+": larger than 16 MiB")
	if err := os.Truncate(big, maxFileBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file of exactly 16 MiB: %v", err)
	}
}
