package sweep

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"handoff/models/strictyaml"
)

// render lists each point as "id-index: path=value ...", without the hash.
func render(points []Point) []string {
	out := make([]string, len(points))
	for i, p := range points {
		parts := make([]string, len(p.Overrides))
		for j, o := range p.Overrides {
			parts[j] = o.Path + "=" + o.Value
		}
		out[i] = fmt.Sprintf("%d: %s", p.Index, strings.Join(parts, " "))
	}
	return out
}

func axis(path string, values ...string) Axis { return Axis{Path: path, Values: values} }

func TestExpandOrder(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []string
	}{
		{"grid: first axis slowest", Spec{Grid: Axes{axis("a", "1", "2"), axis("b", "x", "y", "z")}}, []string{
			"0: a=1 b=x", "1: a=1 b=y", "2: a=1 b=z", "3: a=2 b=x", "4: a=2 b=y", "5: a=2 b=z"}},
		{"zip pairs by position", Spec{Zip: Axes{axis("r", "1", "2", "4"), axis("t", "1s", "2s", "4s")}}, []string{
			"0: r=1 t=1s", "1: r=2 t=2s", "2: r=4 t=4s"}},
		{"replicas only: seeds from the base", Spec{Replicas: 3}, []string{
			"0: seed=41", "1: seed=42", "2: seed=43"}},
		{"grid, then zip, then replicas", Spec{Grid: Axes{axis("g", "a", "b")}, Zip: Axes{axis("z", "1", "2"), axis("w", "3", "4")},
			Replicas: 2}, []string{
			"0: g=a z=1 w=3 seed=41", "1: g=a z=1 w=3 seed=42", "2: g=a z=2 w=4 seed=41", "3: g=a z=2 w=4 seed=42",
			"4: g=b z=1 w=3 seed=41", "5: g=b z=1 w=3 seed=42", "6: g=b z=2 w=4 seed=41", "7: g=b z=2 w=4 seed=42"}},
		{"replicas 1 adds no seed column", Spec{Grid: Axes{axis("a", "1")}, Replicas: 1}, []string{"0: a=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts, err := Expand(&tt.spec, 41)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(pts); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			cols := tt.spec.Columns()
			for _, p := range pts {
				for j, o := range p.Overrides {
					if o.Path != cols[j] {
						t.Fatalf("point %d override %d is %s, column is %s", p.Index, j, o.Path, cols[j])
					}
				}
			}
		})
	}
}

func TestPointIDs(t *testing.T) {
	s := Spec{Grid: Axes{axis("a", "1", "2", "3"), axis("b", "x", "y", "z", "w")}}
	pts, err := Expand(&s, 1)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Expand(&s, 1)
	form := regexp.MustCompile(`^[0-9]{4}-[0-9a-f]{8}$`)
	seen := map[string]bool{}
	for i, p := range pts {
		if !form.MatchString(p.ID) || !strings.HasPrefix(p.ID, fmt.Sprintf("%04d-", i)) {
			t.Errorf("point %d: ID %q, want %04d-<8 hex>", i, p.ID, i)
		}
		if seen[p.ID] {
			t.Errorf("duplicate ID %s", p.ID)
		}
		seen[p.ID] = true
		if again[i].ID != p.ID {
			t.Errorf("ID of point %d changed between expansions: %s, %s", i, p.ID, again[i].ID)
		}
	}
	// The hash part depends on the overrides only: point 0 of another sweep
	// with other values has another ID.
	other := Spec{Grid: Axes{axis("a", "9")}}
	o, _ := Expand(&other, 1)
	if o[0].ID == pts[0].ID {
		t.Errorf("different overrides, same ID %s", o[0].ID)
	}
	// More than 10⁴ points: the index widens.
	big := Spec{Grid: Axes{axis("a", strings.Split(strings.Repeat("v,", 120), ",")[:120]...),
		axis("b", strings.Split(strings.Repeat("v,", 100), ",")[:100]...)}}
	bp, err := Expand(&big, 1)
	if err != nil {
		t.Fatal(err)
	}
	if id := bp[len(bp)-1].ID; !strings.HasPrefix(id, "11999-") {
		t.Errorf("last of 12000 points has ID %s, want 11999-…", id)
	}
	if id := bp[0].ID; !strings.HasPrefix(id, "00000-") {
		t.Errorf("first of 12000 points has ID %s, want 00000-…", id)
	}
}

func TestValidateErrors(t *testing.T) {
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	vary, _ := ParseVary("c=1,2")
	tests := []struct {
		name  string
		spec  Spec
		field string // "" = not a FieldError
		want  string
	}{
		{"empty list", Spec{Grid: Axes{{Path: "pools.decode.count", Line: 7}}}, "sweep.grid.pools.decode.count", "7: field sweep.grid.pools.decode.count: empty value list"},
		{"zip lengths", Spec{Zip: Axes{axis("a", "1", "2"), axis("b", "1", "2", "3")}}, "sweep.zip.b", "3 values, but sweep.zip.a has 2"},
		{"twice", Spec{Grid: Axes{axis("a", "1")}, Zip: Axes{axis("a", "2")}}, "sweep.zip.a", "also varied at sweep.grid.a"},
		{"nested", Spec{Grid: Axes{axis("pools.decode", "{count: 1}"), axis("pools.decode.count", "2")}}, "sweep.grid.pools.decode.count", "overlaps sweep.grid.pools.decode"},
		{"prefix is not nesting", Spec{Grid: Axes{axis("pools.de", "1"), axis("pools.decode", "2"), axis("seed", "1")}}, "", ""},
		{"own block", Spec{Grid: Axes{axis("sweep.replicas", "2")}}, "sweep.grid.sweep.replicas", "cannot vary its own block"},
		{"empty part", Spec{Grid: Axes{axis("pools..count", "2")}}, "sweep.grid.pools..count", "empty part"},
		{"blank path", Spec{Grid: Axes{axis("a b", "2")}}, "sweep.grid.a b", "want a dotted scenario path"},
		{"negative replicas", Spec{Grid: Axes{axis("a", "1")}, Replicas: -1}, "sweep.replicas", "at least 0"},
		{"seed and replicas", Spec{Grid: Axes{axis("seed", "1", "2")}, Replicas: 2}, "sweep.grid.seed", "use one or the other"},
		{"nothing", Spec{Replicas: 1}, "sweep", "nothing to vary"},
		{"too many", Spec{Grid: Axes{axis("a", many...), axis("b", many...)}}, "sweep", "more than 1000000 points"},
		{"--vary replaces the file's axis", withVary(t, Spec{Grid: Axes{axis("c", "1")}}, nil, vary), "", ""},
		{"--vary twice", withVary(t, Spec{Grid: Axes{axis("c", "1")}}, nil, vary, vary), "", "--vary c: also varied at --vary c"},
		{"--vary against zip", withVary(t, Spec{Zip: Axes{axis("c", "1")}}, nil, vary), "sweep.zip.c", "also varied at --vary c"},
		{"bad --vary path", Spec{Grid: Axes{{Path: "a..b", Values: []string{"1"}, vary: true}}}, "", "--vary a..b: path \"a..b\" has an empty part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Expand(&tt.spec, 1)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			var fe *strictyaml.FieldError
			if errors.As(err, &fe) != (tt.field != "") || (fe != nil && fe.Field != tt.field) {
				t.Errorf("error %#v, want a FieldError for %q", err, tt.field)
			}
		})
	}
}

// ExampleExpand shows the order of a grid with replicas.
func ExampleExpand() {
	s := Spec{Grid: Axes{{Path: "pools.decode.count", Values: []string{"2", "4"}}}, Replicas: 2}
	points, err := Expand(&s, 7)
	if err != nil {
		panic(err)
	}
	for _, p := range points {
		fmt.Println(p.ID[:4], p.Overrides)
	}
	// Output:
	// 0000 [{pools.decode.count 2} {seed 7}]
	// 0001 [{pools.decode.count 2} {seed 8}]
	// 0002 [{pools.decode.count 4} {seed 7}]
	// 0003 [{pools.decode.count 4} {seed 8}]
}

func TestCheckPaths(t *testing.T) {
	vary, _ := ParseVary("v=1")
	s := withVary(t, Spec{Grid: Axes{axis("a", "1", "2"), {Path: "b", Values: []string{"3"}, Line: 9}}, Zip: Axes{axis("c", "4")}}, nil, vary)
	var calls []string
	bad := map[string]bool{}
	check := func(path, value string) error {
		calls = append(calls, path+"="+value)
		if bad[path] {
			return fmt.Errorf("no field %q", path)
		}
		return nil
	}
	if err := s.CheckPaths(check); err != nil || strings.Join(calls, " ") != "a=1 b=3 v=1 c=4" {
		t.Errorf("calls %v, error %v", calls, err)
	}
	for path, want := range map[string]string{"b": `9: field sweep.grid.b: no field "b"`, "c": `field sweep.zip.c: no field "c"`,
		"v": `--vary v: no field "v"`} {
		bad = map[string]bool{path: true}
		if err := s.CheckPaths(check); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("bad %s: error %v, want …%s", path, err, want)
		}
	}
}

// TestPointString names a point as messages do, line breaks escaped.
func TestPointString(t *testing.T) {
	p := Point{ID: "0003-1a2b3c4d", Overrides: []Override{{Path: "pools.decode.count", Value: "4"}, {Path: "name", Value: "a\nb"}}}
	if got, want := p.String(), `0003-1a2b3c4d (pools.decode.count=4, name=a\nb)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
