package units

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type doc struct {
	Memory    Bytes     `yaml:"memory"`
	Bandwidth Bandwidth `yaml:"bandwidth"`
	Overhead  Duration  `yaml:"overhead"`
	Rate      Rate      `yaml:"rate"`
	Peak      FLOPS     `yaml:"peak"`
}

func TestYAMLRoundTrip(t *testing.T) {
	in := "memory: 96GiB\nbandwidth: 400Gb/s\noverhead: 1.5m\nrate: 600/min\npeak: 989.5TFLOPS\n"
	var d doc
	if err := yaml.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	want := doc{Bytes(96 << 30), Bandwidth(50e9), Duration(90e9), Rate(10), FLOPS(989.5e12)}
	if d != want {
		t.Fatalf("decoded %+v, want %+v", d, want)
	}
	out, err := yaml.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	canon := "memory: 103.079215104GB\nbandwidth: 50GB/s\noverhead: 90s\nrate: 10/s\npeak: 989.5TFLOPS\n"
	if string(out) != canon {
		t.Errorf("marshal = %q, want %q", out, canon)
	}
	var again doc
	if err := yaml.Unmarshal(out, &again); err != nil || again != d {
		t.Errorf("re-decoded %+v, %v; want %+v", again, err, d)
	}
}

func TestYAMLErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"memory: 80\n", `line 1: bad bytes "80"`},
		{"memory: 80GB\nbandwidth: 50GBs\n", `line 2: bad bandwidth "50GBs": want a number and a unit such as 50GB/s`},
		{"overhead: 5\n", `line 1: bad duration "5"`},
		{"rate: [1]\n", "line 1: bad rate"},
		{"peak: {a: 1}\n", "line 1: bad FLOPS"},
	}
	for _, tt := range tests {
		var d doc
		err := yaml.Unmarshal([]byte(tt.in), &d)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%q) error = %v; want %q", tt.in, err, tt.want)
		}
	}
	var d doc
	if err := yaml.Unmarshal([]byte("overhead: 0\n"), &d); err != nil || d.Overhead != 0 {
		t.Errorf("bare 0 duration: %v, %v", d.Overhead, err)
	}
}
