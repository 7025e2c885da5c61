package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are the shipped example, the test scenarios and variants that
// reach the other workloads, step-time models and catalog entries.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, f := range []string{"quickstart.yaml", "testdata/trace.yaml", "testdata/with-catalog.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	shared := strings.Replace(minimal, `  synthetic:
    requests: 5
    arrival: {process: constant, rate: 1/s}
    input_tokens: {dist: fixed, value: 10}
    output_tokens: {dist: fixed, value: 2}
`, `  shared_prefix:
    num_unique_system_prompts: 2
    num_users_per_system_prompt: 3
    system_prompt_len: 100
    question_len: 20
    output_len: 5
    stages: [{duration: 10s, rate: 2/s}]
  rate_scale: 2
`, 1)
	a100 := strings.Replace(strings.Replace(minimal, "llama-3.1-8b", "opt-13b", 1), "h100-sxm", "a100-80gb", 1)
	poly := a100 + "    step_time: {model: polynomial, file: ../profiles/distserve/profiler-a100-80g.distserve.json, " +
		"profile_model: facebook/opt-13b}\n"
	table := strings.Replace(a100, "opt-13b", "llama-2-70b", 1) + "    tp: 4\n" +
		"    step_time: {model: table, file: ../profiles/splitwise/perf_model.csv, profile_model: llama2-70b, " +
		"profile_hardware: a100-80gb}\n"
	seeds = append(seeds, []byte(base), []byte(minimal), []byte(shared), []byte(poly), []byte(table),
		[]byte(strings.Replace(minimal, "llama-3.1-8b", "tiny-llm", 1)+tinyInline),
		[]byte(base+"link: {kind: nvlink4, bandwidth: 50GB/s, latency: 2us}\nrouter: {policy: least_loaded}\n"))
	return seeds
}

// FuzzParse feeds arbitrary documents to Parse and Build: errors are fine,
// panics are not, and every error is one line.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, filepath.Join("testdata", "fuzz.yaml"))
		if err == nil {
			var b *Built
			if b, err = l.Build(); err == nil {
				b.Close()
				if _, err := l.Effective(""); err != nil {
					t.Fatalf("Effective: %v", err)
				}
			}
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans several lines:\n%v", err)
		}
	})
}

// FuzzSet applies an arbitrary --set to the quickstart scenario.
func FuzzSet(f *testing.F) {
	for _, s := range []string{"pools.decode.count=8", "pools.0.engine={block_size: 32}", "router.policy=least_loaded",
		"workload.synthetic.requests=100000", "slo.ttft=1s", "pools.x.y=1", "name.a=b", "pools=[]", "catalog.files=[a]"} {
		f.Add(s)
	}
	data, err := os.ReadFile("quickstart.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := ParseSet(raw)
		if err != nil {
			return
		}
		l, err := Parse(data, "quickstart.yaml", s)
		if err == nil {
			var b *Built
			if b, err = l.Build(); err == nil {
				b.Close()
			}
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans several lines:\n%v", err)
		}
	})
}
