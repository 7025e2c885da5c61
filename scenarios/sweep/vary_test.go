package sweep

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseVary(t *testing.T) {
	tests := []struct {
		in   string
		path string
		vals []string
		err  string
	}{
		{"pools.decode.count=1,2,4", "pools.decode.count", []string{"1", "2", "4"}, ""},
		{" router.policy = round_robin , least_loaded", "router.policy", []string{"round_robin", "least_loaded"}, ""},
		{"pools.decode.engine={max_num_seqs: 64, block_size: 16},{max_num_seqs: 8}", "pools.decode.engine",
			[]string{"{max_num_seqs: 64, block_size: 16}", "{max_num_seqs: 8}"}, ""},
		{`name="a,b",'c,''d',it's`, "name", []string{`"a,b"`, `'c,''d'`, "it's"}, ""},
		{`name="a\",b"`, "name", []string{`"a\",b"`}, ""},
		{"catalog.files=[a, b],[c]", "catalog.files", []string{"[a, b]", "[c]"}, ""},
		{"a=x", "a", []string{"x"}, ""},
		{"pools.decode.count=", "", nil, "--vary pools.decode.count: empty value list"},
		{"a=1,,2", "", nil, "value 2 of 3 is empty"},
		{"a=1,", "", nil, "value 2 of 2 is empty"},
		{"a=[1,2", "", nil, "unclosed"},
		{"a=1]", "", nil, "unbalanced"},
		{`a="x`, "", nil, "unclosed"},
		{"a", "", nil, "want path=v1,v2"},
		{"=1,2", "", nil, "want a dotted scenario path"},
		{"sweep.replicas=2", "", nil, "cannot vary its own block"},
	}
	for _, tt := range tests {
		ax, err := ParseVary(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseVary(%q): error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || ax.Path != tt.path || !reflect.DeepEqual(ax.Values, tt.vals) || !ax.vary {
			t.Errorf("ParseVary(%q) = %+v, %v; want %s %q", tt.in, ax, err, tt.path, tt.vals)
		}
	}
}

func TestWithVary(t *testing.T) {
	base := Spec{Grid: Axes{axis("a", "1"), axis("b", "2")}, Replicas: 2}
	b, _ := ParseVary("b=5,6")
	c, _ := ParseVary("c=7")
	got := withVary(t, base, nil, b, c)
	want := Axes{axis("a", "1"), {Path: "b", Values: []string{"5", "6"}, vary: true}, {Path: "c", Values: []string{"7"}, vary: true}}
	if !reflect.DeepEqual(got.Grid, want) || got.Replicas != 2 {
		t.Errorf("got %+v, want grid %+v", got, want)
	}
	if base.Grid[1].Values[0] != "2" || len(base.Grid) != 2 {
		t.Errorf("WithVary changed its receiver: %+v", base)
	}
}

// withVary is Spec.WithVary for specs whose paths must resolve.
func withVary(t *testing.T, s Spec, field FieldFunc, axes ...Axis) Spec {
	t.Helper()
	out, err := s.WithVary(field, axes...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fields resolves paths the way the scenario package does for a scenario
// whose pools are [prefill, decode]: pools by name or index.
func fields(path string) (string, error) {
	r := strings.NewReplacer("pools.prefill", "pools[0]", "pools.decode", "pools[1]", "pools.0", "pools[0]", "pools.1", "pools[1]")
	if strings.Contains(path, "nope") {
		return "", fmt.Errorf("no field %q here", "nope")
	}
	return r.Replace(path), nil
}

// TestWithVaryResolvesFields checks that axes naming one field in two
// spellings are one axis: a --vary replaces the file's axis however it is
// spelt, and two axes of one field are refused naming both and the field.
func TestWithVaryResolvesFields(t *testing.T) {
	file := Spec{Grid: Axes{{Path: "pools.decode.count", Values: []string{"1"}, Line: 4}, axis("seed", "1")}}
	v1, _ := ParseVary("pools.1.count=2,3")
	got := withVary(t, file, fields, v1)
	if len(got.Grid) != 2 || got.Grid[0].Path != "pools.1.count" || got.Grid[1].Path != "seed" {
		t.Errorf("grid %+v: want the --vary axis in the file axis's place", got.Grid)
	}
	a, _ := ParseVary("pools.0.count=1,2")
	b, _ := ParseVary("pools.prefill.count=3,4")
	whole, _ := ParseVary("pools.prefill={count: 1}")
	bad, _ := ParseVary("pools.nope=1")
	tests := []struct {
		name string
		spec Spec
		vary []Axis
		want string
	}{
		{"two --vary", Spec{}, []Axis{a, b},
			"--vary pools.prefill.count: also varied at --vary pools.0.count (both name pools[0].count)"},
		{"two file axes", Spec{Grid: Axes{axis("pools.0.count", "1"), {Path: "pools.prefill.count", Values: []string{"2"}, Line: 7}}}, nil,
			"7: field sweep.grid.pools.prefill.count: also varied at sweep.grid.pools.0.count (both name pools[0].count)"},
		{"file grid and zip", Spec{Grid: Axes{axis("pools.0.count", "1")}, Zip: Axes{axis("pools.prefill.count", "2")}}, nil,
			"field sweep.zip.pools.prefill.count: also varied at sweep.grid.pools.0.count (both name pools[0].count)"},
		{"nested", Spec{}, []Axis{whole, a},
			"--vary pools.0.count: overlaps --vary pools.prefill (pools[0] and pools[0].count): one would overwrite the other"},
		{"unknown field", Spec{}, []Axis{bad}, `--vary pools.nope: no field "nope" here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.spec.WithVary(fields, tt.vary...)
			if err == nil {
				_, err = Expand(&s, 1)
			}
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("error %v\nwant …%s", err, tt.want)
			}
		})
	}
}

func FuzzParseVary(f *testing.F) {
	for _, s := range []string{"a=1,2", "a={x: 1},{y: [1, 2]}", `a="x,y",'z'`, "a=", "a=[", "a=]]", `a="\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ax, err := ParseVary(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("multi-line error: %v", err)
			}
			return
		}
		if len(ax.Values) == 0 {
			t.Fatalf("ParseVary(%q) accepted an empty list", s)
		}
		for _, v := range ax.Values {
			if v == "" || v != strings.TrimSpace(v) {
				t.Fatalf("ParseVary(%q): value %q", s, v)
			}
		}
		if err := checkPath(ax.Path); err != nil {
			t.Fatalf("ParseVary(%q) accepted path %q: %v", s, ax.Path, err)
		}
	})
}
