package strictyaml

import (
	"errors"
	"strings"
	"testing"

	"handoff/models/units"
)

type engine struct {
	BlockSize int    `yaml:"block_size"`
	MaxSeqs   int    `yaml:"max_num_seqs"`
	Policy    string `yaml:"preemption"`
}

type pool struct {
	Name      string          `yaml:"name"`
	Count     int             `yaml:"count"`
	Engine    engine          `yaml:"engine"`
	Bandwidth units.Bandwidth `yaml:"bandwidth"`
}

type common struct {
	Seed uint64 `yaml:"seed"`
}

type scenario struct {
	common `yaml:",inline"`
	Model  string            `yaml:"model"`
	Pools  []pool            `yaml:"pools"`
	Tags   map[string]string `yaml:"tags"`
}

const good = `seed: 7
model: llama-3.1-8b
pools:
  - name: prefill
    count: 2
    engine:
      block_size: 16
  - name: decode
    count: 4
    engine: {block_size: 32, max_num_seqs: 128}
    bandwidth: 50GB/s
`

func TestDecodeGood(t *testing.T) {
	var s scenario
	root, err := Decode([]byte(good), "s.yaml", &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 7 || len(s.Pools) != 2 || s.Pools[1].Engine.BlockSize != 32 || s.Pools[1].Bandwidth != 50e9 {
		t.Fatalf("decoded %+v", s)
	}
	if n := Find(root, "pools[1].engine.max_num_seqs"); n == nil || n.Value != "128" || n.Line != 10 {
		t.Errorf("Find = %+v", n)
	}
	for _, p := range []string{"pools[2]", "pools[0].engine.max_num_seqs", "model.x", "pools.x", "a..b", "pools[x]"} {
		if n := Find(root, p); n != nil {
			t.Errorf("Find(%q) = %+v, want nil", p, n)
		}
	}
	if n := Find(root, ""); n == nil || n.Line != 1 {
		t.Errorf("Find(\"\") = %+v", n)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"misspelt nested key", strings.Replace(good, "block_size: 16", "blok_size: 16", 1),
			"s.yaml:7: field pools[0].engine.blok_size: unknown field (did you mean block_size?)"},
		{"transposed key", strings.Replace(good, "model:", "mdoel:", 1),
			"s.yaml:2: field mdoel: unknown field (did you mean model?)"},
		{"inline key", strings.Replace(good, "seed:", "sed:", 1),
			"s.yaml:1: field sed: unknown field (did you mean seed?)"},
		{"far key", strings.Replace(good, "count: 4", "zzzzzz: 4", 1),
			"s.yaml:9: field pools[1].zzzzzz: unknown field (known: bandwidth, count, engine, name)"},
		{"flow mapping key", strings.Replace(good, "max_num_seqs: 128", "max_num_seq: 128", 1),
			"s.yaml:10: field pools[1].engine.max_num_seq: unknown field (did you mean max_num_seqs?)"},
		{"wrong type", strings.Replace(good, "count: 2", "count: two", 1),
			`s.yaml:5: field pools[0].count: want an integer, got "two"`},
		{"wrong type in flow", strings.Replace(good, "max_num_seqs: 128", "max_num_seqs: lots", 1),
			`s.yaml:10: field pools[1].engine.max_num_seqs: want an integer, got "lots"`},
		{"list for scalar", strings.Replace(good, "model: llama-3.1-8b", "model: [a]", 1),
			"s.yaml:2: field model: want a string, got a list"},
		{"bad unit", strings.Replace(good, "50GB/s", "50GBs", 1),
			`s.yaml:11: field pools[1].bandwidth: bad bandwidth "50GBs": want a number and a unit such as 50GB/s`},
		{"first error wins", strings.Replace(strings.Replace(good, "50GB/s", "50", 1), "count: 2", "cont: 2", 1),
			"s.yaml:5: field pools[0].cont: unknown field (did you mean count?)"},
		{"duplicate", good + "model: x\n", "s.yaml:12: field model: duplicate key (first defined at line 2)"},
		{"syntax", "a: [1, 2\n", "s.yaml:1: invalid YAML:"},
		{"tab", "model: x\n\tseed: 1\n", "s.yaml:2: invalid YAML:"},
		{"empty", "", "s.yaml: empty document"},
		{"comments only", "# nothing\n", "s.yaml: empty document"},
		{"null", "~\n", "s.yaml: empty document"},
		{"two documents", "model: a\n---\nmodel: b\n", "s.yaml:2: only one YAML document is allowed"},
		{"top-level list", "- 1\n", "s.yaml:1: want a mapping, got a list"},
	}
	for _, tt := range tests {
		var s scenario
		_, err := Decode([]byte(tt.in), "s.yaml", &s)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error = %v\nwant prefix   %s", tt.name, err, tt.want)
		}
		var fe *FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("%s: error %T is not a *FieldError", tt.name, err)
		}
	}
}

func TestErrorfAndLocate(t *testing.T) {
	var s scenario
	root, err := Decode([]byte(good), "s.yaml", &s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		err  error
		want string
	}{
		{Errorf(root, "s.yaml", "pools[1].count", "must be positive, got %d", 0), "s.yaml:9: field pools[1].count: must be positive, got 0"},
		{Errorf(root, "s.yaml", "pools[1].engine", "bad"), "s.yaml:10: field pools[1].engine: bad"},
		// Missing leaf: the line of the deepest existing node (pools[0].engine, line 6).
		{Errorf(root, "s.yaml", "pools[0].engine.max_num_seqs", "required"), "s.yaml:6: field pools[0].engine.max_num_seqs: required"},
		{Errorf(root, "s.yaml", "router.policy", "required"), "s.yaml:1: field router.policy: required"},
		{Errorf(nil, "s.yaml", "x", "m"), "s.yaml: field x: m"},
		{Locate(root, "s.yaml", "pools[0]", Fieldf("count", "too big")), "s.yaml:5: field pools[0].count: too big"},
		{Locate(root, "s.yaml", "pools[0]", errors.New("plain")), "s.yaml:4: field pools[0]: plain"},
		{Locate(root, "s.yaml", "pools", Fieldf("[1]", "x")), "s.yaml:8: field pools[1]: x"},
		{Fieldf("memory", "must be positive"), "field memory: must be positive"},
		{&FieldError{Line: 3, Msg: "m"}, "line 3: m"},
	}
	for i, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("case %d: %q, want %q", i, got, tt.want)
		}
	}
	if Locate(root, "s.yaml", "x", nil) != nil {
		t.Error("Locate(nil) != nil")
	}
	located := Errorf(root, "a.yaml", "model", "m")
	if Locate(root, "b.yaml", "pools", located) != located {
		t.Error("Locate re-located an already located error")
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"blok_size", "block_size", 1}, {"mdoel", "model", 1},
		{"kitten", "sitting", 3}, {"", "abc", 3}, {"ab", "ba", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// FuzzDecode checks that Decode never panics and that every error is a
// located *FieldError on one line.
func FuzzDecode(f *testing.F) {
	f.Add(good)
	f.Add("pools: [{name: a, engine: {blok_size: 1}}]\n")
	f.Add("a: &x [1]\nb: *x\n")
	f.Add("seed: -1\n")
	f.Fuzz(func(t *testing.T, in string) {
		var s scenario
		root, err := Decode([]byte(in), "f.yaml", &s)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.File != "f.yaml" {
				t.Fatalf("error %v (%T) not located", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error spans several lines:\n%v", err)
			}
			return
		}
		_ = Errorf(root, "f.yaml", "pools[0].engine.block_size", "x")
	})
}
