package sweep

import (
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
	got := base.WithVary(b, c)
	want := Axes{axis("a", "1"), {Path: "b", Values: []string{"5", "6"}, vary: true}, {Path: "c", Values: []string{"7"}, vary: true}}
	if !reflect.DeepEqual(got.Grid, want) || got.Replicas != 2 {
		t.Errorf("got %+v, want grid %+v", got, want)
	}
	if base.Grid[1].Values[0] != "2" || len(base.Grid) != 2 {
		t.Errorf("WithVary changed its receiver: %+v", base)
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
