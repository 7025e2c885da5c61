package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"handoff/models/router"
	"handoff/models/strictyaml"
)

func TestParseSet(t *testing.T) {
	tests := []struct {
		in      string
		want    Set
		wantErr bool
	}{
		{"pools.decode.count=8", Set{"pools.decode.count", "8"}, false},
		{" router.policy =least_loaded", Set{"router.policy", "least_loaded"}, false},
		{"name=a=b", Set{"name", "a=b"}, false}, // the first = splits
		{"name=", Set{"name", ""}, false},
		{"pools.decode.count", Set{}, true},
		{"=8", Set{}, true},
		{"", Set{}, true},
		{"pools.decode count=1", Set{}, true},
		{"pools\ndecode=1", Set{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSet(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSet(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestSet applies overrides to base and checks the field they reach.
func TestSet(t *testing.T) {
	tests := []struct {
		name  string
		sets  []string
		check func(*Scenario) bool
	}{
		{"existing field by pool name", []string{"pools.decode.count=8"},
			func(s *Scenario) bool { return s.Pools[1].Count == 8 }},
		{"pool by index", []string{"pools.0.tp=2"},
			func(s *Scenario) bool { return s.Pools[0].TP == 2 }},
		{"nested workload field", []string{"workload.synthetic.requests=100000"},
			func(s *Scenario) bool { return s.Workload.Synthetic.Requests == 100000 }},
		{"new key", []string{"router.policy=least_loaded"},
			func(s *Scenario) bool { return s.Router.Policy == "least_loaded" }},
		{"new nested keys", []string{"pools.decode.engine.max_model_len=4096"},
			func(s *Scenario) bool {
				e := s.Pools[1].Engine
				return e.MaxModelLen == 4096 && e.BlockSize == defaultBlockSize // others defaulted
			}},
		{"into a flow mapping", []string{"slo.ttft=2s"},
			func(s *Scenario) bool { return s.SLO.TTFT == 2e9 && s.SLO.TPOT == 50e6 }},
		{"mapping value", []string{"pools.decode.engine={block_size: 32, max_num_seqs: 8}"},
			func(s *Scenario) bool { e := s.Pools[1].Engine; return e.BlockSize == 32 && e.MaxNumSeqs == 8 }},
		{"later set wins", []string{"pools.decode.count=3", "pools.decode.count=5"},
			func(s *Scenario) bool { return s.Pools[1].Count == 5 }},
		{"later set wins whatever its spelling", []string{"pools.decode.count=3", "pools.1.count=5"},
			func(s *Scenario) bool { return s.Pools[1].Count == 5 }},
		{"later set wins inside an earlier one", []string{"pools.1.engine={block_size: 32}", "pools.decode.engine.block_size=64"},
			func(s *Scenario) bool { return s.Pools[1].Engine.BlockSize == 64 }},
		{"two fields", []string{"workload.synthetic.requests=7", "pools.prefill.hardware=h200"},
			func(s *Scenario) bool { return s.Workload.Synthetic.Requests == 7 && s.Pools[0].Hardware == "h200" }},
		{"null restores the default", []string{"pools.decode.count=null"},
			func(s *Scenario) bool { return s.Pools[1].Count == 1 }},
		{"string that looks like a number", []string{"name=123"},
			func(s *Scenario) bool { return s.Name == "123" }},
		{"field of an inlined struct", []string{"pools.0.step_time.mfu=0.5", "pools.decode.step_time.step_overhead=1ms"},
			func(s *Scenario) bool {
				return s.Pools[0].StepTime.MFU == 0.5 && *s.Pools[1].StepTime.StepOverhead == 1e6
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _, err := parseBuild(t, base, "t.yaml", mustSets(t, tt.sets...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(&l.Scenario) {
				t.Errorf("%v did not take effect: %+v", tt.sets, l.Scenario)
			}
		})
	}
}

func TestSetErrors(t *testing.T) {
	tests := []struct {
		name string
		sets []string
		want []string
	}{
		{"unknown field", []string{"pools.decode.cont=3"},
			[]string{`--set pools.decode.cont: no field "cont" here (known: name, role, count, hardware, tp`}},
		{"unknown top-level field", []string{"routr.policy=x"},
			[]string{`--set routr.policy: no field "routr" here (known: name, seed, model, slo, workload, pools, link, topology, router, gateway, kv_store, catalog, metrics, sweep, plan, faults)`}},
		{"unknown field beside inlined ones", []string{"pools.0.step_time.mfuu=0.5"},
			[]string{`--set pools.0.step_time.mfuu: no field "mfuu" here (known: model, mfu, decode_mfu, mbu, step_overhead, ` +
				`expert_imbalance, file, profile_model, profile_hardware)`}},
		{"past a scalar", []string{"name.first=x"}, []string{"--set name.first:", `"first": string has no fields`}},
		{"unknown pool", []string{"pools.decod.count=3"},
			[]string{`--set pools.decod.count: no list item named "decod" (have prefill, decode)`}},
		{"index out of range", []string{"pools.7.count=3"}, []string{`--set pools.7.count: no list item named "7"`}},
		{"type error after set", []string{"pools.decode.count=two"},
			[]string{`t.yaml: field pools[1].count: want an integer, got "two" (from --set pools.decode.count=two)`}},
		{"unit error after set", []string{"slo.ttft=500"},
			[]string{`t.yaml: field slo.ttft: bad duration "500"`, "(from --set slo.ttft=500)"}},
		{"validation error after set", []string{"pools.decode.count=0"},
			[]string{"t.yaml: field pools[1].count: must be in [1, 16384], got 0 (from --set pools.decode.count=0)"}},
		{"error inside a set mapping", []string{"pools.decode.engine={block_size: 0}"},
			[]string{"t.yaml: field pools[1].engine.block_size: must be positive, got 0 (from --set pools.decode.engine={block_size: 0})"}},
		{"build error after set", []string{"pools.prefill.hardware=h100-sxn"},
			[]string{`t.yaml: field pools[0].hardware:`, `unknown accelerator "h100-sxn"`, "(from --set pools.prefill.hardware=h100-sxn)"}},
		{"list where a mapping is", []string{"slo=[1, 2]"},
			[]string{"t.yaml: field slo: want a mapping, got a list (from --set slo=[1, 2])"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseBuild(t, base, "t.yaml", mustSets(t, tt.sets...)...)
			if err == nil {
				t.Fatal("no error")
			}
			checkError(t, err, tt.want...)
		})
	}
}

// TestSetKeepsFileLines checks that an error in a field no --set touched
// still names its line in the file.
func TestSetKeepsFileLines(t *testing.T) {
	doc := edit(t, "role: prefill", "role: prefil")
	_, _, err := parseBuild(t, doc, "t.yaml", mustSets(t, "pools.decode.count=3")...)
	if err == nil {
		t.Fatal("no error")
	}
	checkError(t, err, `t.yaml:12: field pools[0].role: unknown role "prefil"`)
	if strings.Contains(err.Error(), "--set") {
		t.Errorf("error %q blames --set", err)
	}
}

// TestFieldPath checks that every spelling of a field resolves to one
// path, so that sweep axes can be compared, and that the document does not
// change.
func TestFieldPath(t *testing.T) {
	l, err := Parse([]byte(base), "t.yaml", mustSets(t, "pools.decode.count=3")...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"pools.prefill.count", "pools[0].count"},
		{"pools.0.count", "pools[0].count"},
		{"pools.decode", "pools[1]"},
		{"pools.1.engine.max_model_len", "pools[1].engine.max_model_len"},
		{"seed", "seed"},
		{"router.dynamo.temperature", "router.dynamo.temperature"},
	}
	for _, tt := range tests {
		if got, err := l.FieldPath(tt.path); err != nil || got != tt.want {
			t.Errorf("FieldPath(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
	for path, want := range map[string]string{"pools.decod.count": `no list item named "decod" (have prefill, decode)`,
		"pools.0.cont": `no field "cont" here`} {
		if _, err := l.FieldPath(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("FieldPath(%q): error %v, want %s…", path, err, want)
		}
	}
	if n := strictyaml.Find(l.root, "router"); n != nil {
		t.Errorf("FieldPath wrote into the document: router = %+v", n)
	}
}

func mustSets(t *testing.T, raw ...string) []Set {
	t.Helper()
	var sets []Set
	for _, r := range raw {
		s, err := ParseSet(r)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	return sets
}

// TestSetNamesItemsOfDefaultLists checks that --set reaches an item of a
// list the file leaves to the defaults (llm-d's scorers) by its name, and
// that the other items keep their defaults.
func TestSetNamesItemsOfDefaultLists(t *testing.T) {
	want := []router.WeightedScorer{{Name: "queue", Weight: 2}, {Name: "kv-cache-utilization", Weight: 2}, {Name: "prefix-cache", Weight: 7}}
	for name, doc := range map[string]string{
		"no llmd section":   base + "router: {policy: llmd}\n",
		"no scorers":        base + "router: {policy: llmd, llmd: {picker: max-score}}\n",
		"null scorers":      base + "router: {policy: llmd, llmd: {scorers: null}}\n",
		"null llmd":         base + "router: {policy: llmd, llmd: null}\n",
		"policy by --set":   base,
		"llmd by --set too": base + "router: {policy: round_robin}\n",
	} {
		t.Run(name, func(t *testing.T) {
			sets := mustSets(t, "router.policy=llmd", "router.llmd.scorers.prefix-cache.weight=7")
			l, err := Parse([]byte(doc), "t.yaml", sets...)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Router.LLMD.Scorers; !reflect.DeepEqual(got, want) {
				t.Errorf("scorers %+v, want %+v", got, want)
			}
			if f, err := l.FieldPath("router.llmd.scorers.prefix-cache.weight"); f != "router.llmd.scorers[2].weight" || err != nil {
				t.Errorf("FieldPath = %q, %v", f, err)
			}
		})
	}
	doc := base + "router: {policy: llmd, llmd: {scorers: [{name: queue, weight: 1}]}}\n"
	_, err := Parse([]byte(doc), "t.yaml", mustSets(t, "router.llmd.scorers.prefix-cache.weight=7")...)
	checkError(t, err, `--set router.llmd.scorers.prefix-cache.weight: no list item named "prefix-cache" (have queue)`)
}

// TestSetIntoMap checks that --set reaches the values of a mapping keyed
// by name (the plan block's pools).
func TestSetIntoMap(t *testing.T) {
	for _, doc := range []string{base, base + "plan: {pools: {prefill: {count: [1, 2]}}}\n"} {
		l, err := Parse([]byte(doc), "t.yaml", mustSets(t, "plan.pools.decode.count=[1, 4]")...)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Plan.Pools["decode"].Count; !reflect.DeepEqual(got, []int{1, 4}) {
			t.Errorf("plan decode count %v, want [1 4]", got)
		}
	}
}

// TestReadmeSetExamples loads and builds the shipped scenarios with the
// --set flags README.md and docs/ show for them.
func TestReadmeSetExamples(t *testing.T) {
	tests := []struct {
		file string
		sets []string
	}{
		{"quickstart.yaml", []string{"workload.synthetic.requests=100000", "pools.decode.count=8", "router.policy=least_loaded"}},
		{"calibration/calib-llama-2-7b-tp1-codegen.yaml", []string{"workload.shared_prefix.stages=[{duration: 60s, rate: 5/s}]"}},
		{"router-llmd.yaml", []string{"router.llmd.scorers.prefix-cache.weight=7"}},
		{"router-dynamo.yaml", []string{"router.policy=dynamo", "router.dynamo.overlap_score_credit=0"}},
		{"router-dynamo.yaml", []string{"router.policy=dynamo", "router.dynamo.temperature=0.5"}},
		{"router-dynamo.yaml", []string{"router.policy=llmd", "router.llmd.non_cached_tokens=512"}},
		{"router-dynamo.yaml", []string{"router.policy=topology_aware"}},
		{"decode-cascade.yaml", []string{"pools.decode.preemption=swap", "pools.decode.swap={host_memory: 512GB}"}},
		{"decode-cascade.yaml", []string{"pools.decode.preemption=reject", "pools.decode.reject={cache_hit_threshold: 0.5, phase: 1}"}},
		{"decode-cascade.yaml", []string{"pools.decode.preemption=reject", "pools.decode.reject={cache_hit_threshold: 0.5, phase: 2}"}},
		{"gpu-vs-wafer-decode.yaml", []string{"workload.synthetic.input_tokens={dist: lognormal, mean: 6000, stddev: 1000, max: 7000}",
			"workload.synthetic.output_tokens={dist: uniform, min: 64, max: 256}", "workload.synthetic.arrival.rate=4/s"}},
		{"trainium-prefill-wafer-decode.yaml", []string{"workload.synthetic.arrival.rate=16/s",
			"workload.synthetic.input_tokens={dist: lognormal, mean: 1000, stddev: 1500, max: 12000}", "pools.decode.wafer.pressure_policy=reject"}},
		{"sweep-router.yaml", []string{"router.dynamo.prefill_load_scale=4", "router.dynamo.overlap_score_credit=4"}},
		{"plan-quickstart.yaml", []string{"pools.decode.hardware=h200"}},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+strings.Join(tt.sets, " "), func(t *testing.T) {
			l, err := Load(tt.file, mustSets(t, tt.sets...)...)
			if err == nil {
				var b *Built
				if b, err = l.Build(); err == nil {
					b.Close()
				}
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
}
