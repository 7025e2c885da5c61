package sweep

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type doc struct {
	Sweep *Spec `yaml:"sweep,omitempty"`
}

func decode(t *testing.T, text string) (*Spec, error) {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var d doc
	err := dec.Decode(&d)
	return d.Sweep, err
}

func TestDecodeKeepsOrderAndValues(t *testing.T) {
	s, err := decode(t, `
sweep:
  grid:
    z.last: [3, 1]
    a.first: ["1", 'two', {max_num_seqs: 64, block_size: 16}, [a, b], null, 2s]
  zip:
    m: [&x 1, *x]
  replicas: 2
`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Grid: Axes{
			{Path: "z.last", Values: []string{"3", "1"}, Line: 4},
			{Path: "a.first", Values: []string{`"1"`, "two", "{max_num_seqs: 64, block_size: 16}", "[a, b]", "null", "2s"}, Line: 5},
		},
		Zip:      Axes{{Path: "m", Values: []string{"1", "1"}, Line: 7}},
		Replicas: 2,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
}

// TestMarshalRoundTrip renders a decoded spec and decodes it again.
func TestMarshalRoundTrip(t *testing.T) {
	s, err := decode(t, "sweep:\n  grid:\n    b: [\"1\", {x: [1, 2]}, 'it''s', \"a, b\"]\n    a: [1]\n  replicas: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(doc{s})
	if err != nil {
		t.Fatal(err)
	}
	back, err := decode(t, string(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i := range back.Grid {
		back.Grid[i].Line, s.Grid[i].Line = 0, 0
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip changed the spec:\n%+v\n%+v\n%s", s, back, out)
	}
	again, _ := yaml.Marshal(doc{back})
	if !bytes.Equal(out, again) {
		t.Errorf("rendering changed:\n%s\n%s", out, again)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sweep: {grid: [a, b]}", "line 1: want a mapping of path: [values], got a list"},
		{"sweep:\n  grid:\n    a: 3\n", `line 3: want a list of values, got "3"`},
		{"sweep:\n  zip:\n    a: {b: 1}\n", "line 3: a: want a list of values, got a mapping"},
		{"sweep:\n  gird: {a: [1]}\n", "field gird not found"},
		{"sweep: {grid: {a: [1, !local x]}}", "tag !local is not allowed in a sweep value"},
	}
	for _, tt := range tests {
		_, err := decode(t, tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestMultiLineValue checks that a block scalar becomes a one-line value.
func TestMultiLineValue(t *testing.T) {
	s, err := decode(t, "sweep:\n  grid:\n    name:\n      - |\n        two\n        lines\n")
	if err != nil || s.Grid[0].Values[0] != `"two\nlines\n"` {
		t.Errorf("got %+v, %v", s, err)
	}
}

func TestNullAxes(t *testing.T) {
	s, err := decode(t, "sweep: {grid: null, replicas: 2}")
	if err != nil || s.Grid != nil || s.Replicas != 2 {
		t.Errorf("got %+v, %v", s, err)
	}
}

// FuzzSpec decodes arbitrary sweep blocks: errors are fine, panics are
// not; a block that decodes renders and decodes back to the same values,
// and small ones expand to points with unique IDs.
func FuzzSpec(f *testing.F) {
	for _, s := range []string{
		"sweep: {grid: {a.b: [1, 2], c: [x]}, zip: {d: [1, 2], e: [3, 4]}, replicas: 2}",
		"sweep:\n  grid:\n    pools.decode.engine: [{max_num_seqs: 64}, \"{x: 1}\", 'q']\n",
		"sweep: {grid: {a: []}}", "sweep: {zip: {a: [1], b: [1, 2]}}", "sweep: {grid: {a: [&x 1, *x]}}",
		"sweep: {grid: {a: [|\n  x\n  y\n]}}", "sweep: {replicas: -1}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := decode(t, text)
		if err != nil || s == nil {
			return
		}
		out, err := yaml.Marshal(doc{s})
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		back, err := decode(t, string(out))
		if err != nil {
			t.Fatalf("rendered block does not decode: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(values(back), values(s)) {
			t.Fatalf("values changed:\n%q\n%q\n%s", values(s), values(back), out)
		}
		if n, ok := s.count(); !ok || n > 1000 || s.Validate() != nil {
			return
		}
		pts, err := Expand(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, p := range pts {
			if ids[p.ID] {
				t.Fatalf("duplicate ID %s", p.ID)
			}
			ids[p.ID] = true
		}
	})
}

// values lists a spec's axes without their lines.
func values(s *Spec) []string {
	var out []string
	for _, axes := range []Axes{s.Grid, s.Zip} {
		for _, ax := range axes {
			out = append(out, ax.Path+"="+strings.Join(ax.Values, "\x00"))
		}
		out = append(out, "|")
	}
	return append(out, fmt.Sprint(s.Replicas))
}

// TestAliasBomb checks that nested aliases cannot make a value explode.
func TestAliasBomb(t *testing.T) {
	text := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g"} {
		text += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	text += "sweep:\n  grid:\n    p: [*g]\n"
	var d struct {
		Sweep *Spec `yaml:"sweep"` // the other keys are skipped, not expanded
	}
	err := yaml.Unmarshal([]byte(text), &d)
	if err == nil || !strings.Contains(err.Error(), "more than 10000 parts") {
		t.Errorf("error %v, want the value refused", err)
	}
}

// TestEmptyValueIsNull checks that an empty list item is null, as YAML
// reads it, and not an empty string.
func TestEmptyValueIsNull(t *testing.T) {
	s, err := decode(t, "sweep:\n  grid:\n    a:\n      -\n      - 1\n")
	if err != nil || !reflect.DeepEqual(s.Grid[0].Values, []string{"null", "1"}) {
		t.Errorf("got %+v, %v", s, err)
	}
}
