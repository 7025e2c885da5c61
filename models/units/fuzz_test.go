package units

import "testing"

var seeds = []string{"80GB", "3.35TB/s", "400Gb/s", "100Gbps", "150ms", "1.5m", "0", "10/s", "600/min",
	"989.5TFLOPS", "1e3GB", ".5s", "5e", "-1s", "", "1e99999GB", "9223372036.854775807s", "0.0000001ns"}

// FuzzParse checks that no parser panics and that every accepted value
// survives Format and Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []struct {
			parse  func(string) (float64, error)
			format func(float64) string
		}{{ParseBytes, FormatBytes}, {ParseBandwidth, FormatBandwidth}, {ParseRate, FormatRate}, {ParseFLOPS, FormatFLOPS}} {
			v, err := c.parse(s)
			if err != nil {
				continue
			}
			if v < 0 || v != v {
				t.Fatalf("parse(%q) = %v", s, v)
			}
			text := c.format(v)
			if back, err := c.parse(text); err != nil || back != v {
				t.Fatalf("parse(%q) = %v; format = %q; parse again = %v, %v", s, v, text, back, err)
			}
		}
		ns, err := ParseDuration(s)
		if err != nil {
			return
		}
		text := FormatDuration(ns)
		if back, err := ParseDuration(text); err != nil || back != ns {
			t.Fatalf("ParseDuration(%q) = %d; format = %q; parse again = %d, %v", s, ns, text, back, err)
		}
	})
}
