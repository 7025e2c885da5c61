package strictyaml

import (
	"strings"
	"testing"

	"handoff/models/units"
)

// ints is a document type with integer fields of several widths and
// places: nested, in lists, in maps, behind pointers.
type ints struct {
	Seed   uint64         `yaml:"seed"`
	Count  int            `yaml:"count"`
	Small  int8           `yaml:"small"`
	Width  uint16         `yaml:"width"`
	TPs    []int          `yaml:"tps"`
	Limits map[string]int `yaml:"limits"`
	Inner  *struct {
		Requests int `yaml:"requests"`
	} `yaml:"inner"`
	Every units.Duration `yaml:"every"` // decodes itself: not an integer field
	Ratio float64        `yaml:"ratio"`
	Any   map[string]any `yaml:"any"` // not typed: not checked
}

func TestDecodeIntegers(t *testing.T) {
	var s ints
	in := "seed: 18446744073709551615\ncount: 1_000\nsmall: -128\nwidth: 0x10\ntps: [1, 0o10]\n" +
		"limits: {a: 3}\ninner: {requests: 5}\nevery: 0\nratio: 2\n"
	if _, err := Decode([]byte(in), "i.yaml", &s); err != nil {
		t.Fatal(err)
	}
	if s.Seed != 1<<64-1 || s.Count != 1000 || s.Small != -128 || s.Width != 16 || s.TPs[1] != 8 ||
		s.Limits["a"] != 3 || s.Inner.Requests != 5 || s.Ratio != 2 {
		t.Fatalf("decoded %+v", s)
	}
}

func TestDecodeRefusesNonIntegers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"count: 2.5\n", `i.yaml:1: field count: want an integer, got "2.5"`},
		{"count: 2.0\n", `i.yaml:1: field count: want an integer, got "2.0"`},
		{"count: 1e30\n", `i.yaml:1: field count: want an integer, got "1e30"`},
		{"count: .inf\n", `i.yaml:1: field count: want an integer, got ".inf"`},
		{"count: -.inf\n", `i.yaml:1: field count: want an integer, got "-.inf"`},
		{"seed: 1.9\n", `i.yaml:1: field seed: want an integer, got "1.9"`},
		{"seed: 18446744073709551616\n", "i.yaml:1: field seed: want an integer in [0, 18446744073709551615], got 18446744073709551616"},
		{"seed: -1\n", "i.yaml:1: field seed: want an integer in [0, 18446744073709551615], got -1"},
		{"count: 9223372036854775808\n", "i.yaml:1: field count: want an integer in [-9223372036854775808, 9223372036854775807], got 9223372036854775808"},
		{"small: 128\n", "i.yaml:1: field small: want an integer in [-128, 127], got 128"},
		{"width: 65536\n", "i.yaml:1: field width: want an integer in [0, 65535], got 65536"},
		{"tps: [1, 1.5]\n", `i.yaml:1: field tps[1]: want an integer, got "1.5"`},
		{"limits:\n  a: 1\n  b: 2.5\n", `i.yaml:3: field limits.b: want an integer, got "2.5"`},
		{"inner: {requests: 2.5}\n", `i.yaml:1: field inner.requests: want an integer, got "2.5"`},
		{"any: {x: &n 2.5}\ninner: {requests: *n}\n", `i.yaml:1: field inner.requests: want an integer, got "2.5"`},
		{"any: {b: &b {requests: 7.5}}\ninner: {<<: *b}\n", `i.yaml:1: field inner.requests: want an integer, got "7.5"`},
		// The first error by line wins, whether it is yaml.v3's or this check's.
		{"count: 2.5\nsmall: x\n", `i.yaml:1: field count: want an integer, got "2.5"`},
		{"small: x\ncount: 2.5\n", `i.yaml:1: field small: want an integer, got "x"`},
		{"cont: 1\ncount: 2.5\n", "i.yaml:1: field cont: unknown field"},
	}
	for _, tt := range tests {
		var s ints
		_, err := Decode([]byte(tt.in), "i.yaml", &s)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error = %v\nwant prefix %s", tt.in, err, tt.want)
		}
	}
}
