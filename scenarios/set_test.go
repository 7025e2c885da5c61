package scenarios

import (
	"strings"
	"testing"

	"handoff/hardware/spec"
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
			[]string{`--set routr.policy: no field "routr" here (known: name, seed, model, slo, workload, pools, link, topology, router, catalog, metrics, sweep, plan)`}},
		{"past a scalar", []string{"name.first=x"}, []string{"--set name.first:", `"first": string has no fields`}},
		{"unknown pool", []string{"pools.decod.count=3"},
			[]string{`--set pools.decod.count: no list item named "decod" (have prefill, decode)`}},
		{"index out of range", []string{"pools.7.count=3"}, []string{`--set pools.7.count: no list item named "7"`}},
		{"type error after set", []string{"pools.decode.count=two"},
			[]string{`t.yaml: field pools[1].count: want an integer, got "two" (from --set pools.decode.count=two)`}},
		{"unit error after set", []string{"slo.ttft=500"},
			[]string{`t.yaml: field slo.ttft: bad duration "500"`, "(from --set slo.ttft=500)"}},
		{"validation error after set", []string{"pools.decode.count=0"},
			[]string{"t.yaml: field pools[1].count: must be in [1, 1024], got 0 (from --set pools.decode.count=0)"}},
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
	if n := spec.Find(l.root, "router"); n != nil {
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
