package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// minimal leaves out every optional field.
const minimal = `name: m
model: llama-3.1-8b
slo: {ttft: 1s, tpot: 100ms}
workload:
  synthetic:
    requests: 5
    arrival: {process: constant, rate: 1/s}
    input_tokens: {dist: fixed, value: 10}
    output_tokens: {dist: fixed, value: 2}
pools:
  - name: p
    hardware: h100-sxm
`

func TestDefaults(t *testing.T) {
	l, err := Parse([]byte(minimal), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yes, zero := true, 0.0
	want := Scenario{
		Name: "m", Seed: 1, Model: "llama-3.1-8b",
		SLO:      SLO{TTFT: 1e9, TPOT: 100e6, Attainment: 0.9},
		Workload: Workload{Synthetic: l.Workload.Synthetic, RateScale: 1},
		Pools: []Pool{{Name: "p", Role: "colocated", Count: 1, Hardware: "h100-sxm", TP: 1, DP: 1, EP: 1, PP: 1, DPRouting: "balancer",
			Engine: Engine{MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, BlockSize: 16, MemoryUtilization: 0.9,
				RemoteKVQueue: "separate", PrefixCaching: &yes, ChunkedPrefill: &yes, AsyncScheduling: &yes,
				Kind: "vllm", VLLM: "latest", Admission: "full_sequence", ReserveInflight: &yes, DeferredFree: &yes,
				FencedVictim: "wait", Watermark: &zero, HybridKVWithConnector: &yes},
			Preemption: "recompute", StepTime: StepTime{Model: "roofline"}, KVHandoff: "direct"}},
		Link:    Link{Kind: "nvlink4"},
		Router:  Router{Policy: "round_robin"},
		Metrics: Metrics{LockupThreshold: 1e9, LockupAbort: 60e9},
	}
	if !reflect.DeepEqual(l.Scenario, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", l.Scenario, want)
	}
}

// TestExplicitValuesKept checks that written values, zero ones included,
// are not replaced by defaults, and that null means "use the default".
func TestExplicitValuesKept(t *testing.T) {
	doc := minimal + "    count: 3\n    tp: 2\n    engine: {block_size: 32, prefix_caching: false, max_num_seqs: null}\n" +
		"seed: 0\nrouter: {policy: least_loaded}\n"
	l, err := Parse([]byte(doc), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Pools[0]
	switch {
	case l.Seed != 0:
		t.Errorf("seed = %d, want the explicit 0", l.Seed)
	case p.Count != 3 || p.TP != 2 || p.Engine.BlockSize != 32 || *p.Engine.PrefixCaching:
		t.Errorf("pool = %+v, want count 3, tp 2, block_size 32, no prefix caching", p)
	case p.Engine.MaxNumSeqs != 1024:
		t.Errorf("max_num_seqs: null gave %d, want the H100 default 1024", p.Engine.MaxNumSeqs)
	case l.Router.Policy != "least_loaded":
		t.Errorf("router = %q", l.Router.Policy)
	}
}

// TestBatchDefaultsFollowVLLM: max_num_seqs and max_num_batched_tokens
// default as vLLM's get_batch_defaults picks them for an online server — by
// the device's memory, A100 excepted — and a wafer keeps 256 and 8192;
// prefill pools hold KV for VLLM_NIXL_ABORT_REQUEST_TIMEOUT's 480 s.
func TestBatchDefaultsFollowVLLM(t *testing.T) {
	for hw, want := range map[string][2]int{"h100-sxm": {1024, 8192}, "h200": {1024, 8192},
		"a100-80gb": {256, 2048}, "trainium2": {1024, 8192}} {
		l, err := Parse([]byte(strings.Replace(minimal, "h100-sxm", hw, 1)), "m.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if e := l.Pools[0].Engine; e.MaxNumSeqs != want[0] || e.MaxNumBatchedTokens != want[1] {
			t.Errorf("%s: max_num_seqs %d, max_num_batched_tokens %d; want %v", hw, e.MaxNumSeqs, e.MaxNumBatchedTokens, want)
		}
	}
	l, err := Parse([]byte(base), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Pools[0]; p.Role != "prefill" || p.KVHold == nil || p.KVHold.Mode != "lease" ||
		*p.KVHold.Lease != 30e9 || !*p.NotifyRejected || l.Pools[1].KVHold != nil ||
		l.Pools[1].KVLoadFailurePolicy != "fail" {
		t.Errorf("kv_hold %+v, notify_rejected %v on %s; %+v, %q on %s; want the latest release's 30 s lease and notify on the "+
			"prefill pool, the fail policy on the decode pool", p.KVHold, p.NotifyRejected, p.Role,
			l.Pools[1].KVHold, l.Pools[1].KVLoadFailurePolicy, l.Pools[1].Role)
	}
}

func TestExplicitZeroRejected(t *testing.T) {
	for _, field := range []string{"count: 0", "tp: 0", "engine: {max_num_batched_tokens: 0}",
		"engine: {max_num_seqs: 0}", "engine: {memory_utilization: 0}", `role: ""`} {
		if _, err := Parse([]byte(minimal+"    "+field+"\n"), "m.yaml"); err == nil {
			t.Errorf("%s: no error", field)
		} else if !strings.Contains(err.Error(), "m.yaml:13: field pools[0].") {
			t.Errorf("%s: error %q does not name m.yaml:13 and the pool", field, err)
		}
	}
	for _, doc := range []string{minimal + "slo: {attainment: 0}\n", strings.Replace(minimal, "workload:\n", "workload:\n  rate_scale: 0\n", 1)} {
		if _, err := Parse([]byte(doc), "m.yaml"); err == nil {
			t.Errorf("no error for an explicit zero in\n%s", doc)
		}
	}
}

// TestEffectiveRoundTrip writes the effective scenario into another folder
// and loads it back: same scenario, same rendering, same build; the trace
// path still reaches the same file.
func TestEffectiveRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		file string
		sets []string
	}{
		{"quickstart.yaml", nil},
		{"quickstart.yaml", []string{"pools.decode.count=3", "router.policy=least_loaded", "seed=9"}},
		{filepath.Join("testdata", "trace.yaml"), []string{"workload.trace.limit=2"}},
		{filepath.Join("testdata", "with-catalog.yaml"), nil},
		{"config-json-model.yaml", nil},
		{filepath.Join("testdata", "config-catalog.yaml"), nil},
		// Explicit zeros where the default is not zero: llm-d's view,
		// current (its default refreshes every 50 ms), and a prefill
		// pool's KV held forever (the default frees it after 480 s).
		{"quickstart.yaml", []string{"router.policy=llmd", "router.refresh_interval=0s", "pools.prefill.kv_hold_timeout=0s"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			roundTrip(t, tt.file, mustSets(t, tt.sets...))
		})
	}
}

func roundTrip(t *testing.T, file string, sets []Set) {
	l, err := Load(file, sets...)
	if err != nil {
		t.Fatal(err)
	}
	before := l.Scenario
	dir := t.TempDir()
	eff, err := l.Effective(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Scenario, before) {
		t.Error("Effective changed the loaded scenario")
	}
	saved := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(saved, eff, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(saved)
	if err != nil {
		t.Fatalf("effective scenario does not load: %v\n%s", err, eff)
	}
	again, err := back.Effective(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(eff, again) {
		t.Errorf("rendering changed on reload:\n%s\nthen\n%s", eff, again)
	}
	compareBuilds(t, l, back)
}

// compareBuilds checks that two loaded scenarios build the same cluster
// and workload.
func compareBuilds(t *testing.T, a, b *Loaded) {
	t.Helper()
	ba, err := a.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := b.Build()
	if err != nil {
		t.Fatalf("reloaded scenario does not build: %v", err)
	}
	defer bb.Close()
	ca, cb := ba.Config, bb.Config
	if ca.Seed != cb.Seed || ca.SLO != cb.SLO || len(ca.Instances) != len(cb.Instances) {
		t.Fatalf("configs differ: seed %d/%d, SLO %+v/%+v, %d/%d instances",
			ca.Seed, cb.Seed, ca.SLO, cb.SLO, len(ca.Instances), len(cb.Instances))
	}
	for i := range ca.Instances {
		ia, ib := ca.Instances[i], cb.Instances[i]
		if ia.Name != ib.Name || ia.Role != ib.Role || ia.GPUs != ib.GPUs || !reflect.DeepEqual(ia.Engine, ib.Engine) ||
			ia.KVHold != ib.KVHold || ia.StrandRejected != ib.StrandRejected ||
			ia.RecomputeLoadFailures != ib.RecomputeLoadFailures || ia.DecodeFirst != ib.DecodeFirst ||
			ia.DecodeFirstThreshold != ib.DecodeFirstThreshold {
			t.Errorf("instance %d differs: %+v vs %+v", i, ia, ib)
		}
	}
	if na, nb := countRequests(t, ca.Source), countRequests(t, cb.Source); na != nb {
		t.Errorf("workloads differ: %d vs %d requests", na, nb)
	}
}

// TestEffectiveKeepsPathsWithoutDir checks that dir "" leaves relative
// paths as written.
func TestEffectiveKeepsPathsWithoutDir(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "trace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	eff, err := l.Effective("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(eff), "path: traces/ok.csv") {
		t.Errorf("path rewritten without a dir:\n%s", eff)
	}
	eff, err = l.Effective(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(eff), "path: traces/ok.csv") {
		t.Errorf("path not rewritten for another folder:\n%s", eff)
	}
}
