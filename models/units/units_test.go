package units

import (
	"math"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"80GB", 80e9},
		{"1.5TB", 1.5e12},
		{"512B", 512},
		{"0B", 0},
		{"44 GB", 44e9},
		{"230MB", 230e6},
		{"1kB", 1000},
		{"96GiB", 96 * 1024 * 1024 * 1024}, // 103079215104
		{"1KiB", 1024},
		{"2e3MB", 2e9},
		{".5GB", 5e8},
		{"7.GB", 7e9},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"50GB/s", 50e9},
		{"3.35TB/s", 3.35e12},
		{"21PB/s", 21e15},
		{"400Gb/s", 50e9},   // 400e9 bits / 8
		{"100Gbps", 12.5e9}, // 100e9 / 8
		{"3.2Tbps", 400e9},  // EFA per Trn2 instance
		{"1GiB/s", 1 << 30},
	}
	for _, tt := range tests {
		got, err := ParseBandwidth(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"0s", 0},
		{"2s", 2e9},
		{"150ms", 150e6},
		{"10us", 10e3},
		{"10µs", 10e3},
		{"5ns", 5},
		{"1.5m", 90e9},
		{"2min", 120e9},
		{"1h", 3600e9},
		{"0.4ns", 0}, // rounds to nearest
		{"1.5ns", 2},
		{"2.5e-3s", 2_500_000},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRateAndFLOPS(t *testing.T) {
	rates := []struct {
		in   string
		want float64
	}{{"10/s", 10}, {"600/min", 10}, {"0.5/s", 0.5}, {"36000/h", 10}, {"3/m", 0.05}}
	for _, tt := range rates {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	flops := []struct {
		in   string
		want float64
	}{{"989.5TFLOPS", 989.5e12}, {"1.2PFLOPS", 1.2e15}, {"500GFLOPS", 500e9}, {"312TFLOP/s", 312e12}}
	for _, tt := range flops {
		got, err := ParseFLOPS(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseFLOPS(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		parse func(string) error
		in    string
		want  string
	}{
		{bw, "50GBs", `bad bandwidth "50GBs": want a number and a unit such as 50GB/s`},
		{bw, "50", "want a number and a unit"},
		{bw, "50GB", "want a number and a unit"}, // bytes, not bytes/s
		{by, "80", `bad bytes "80": want a number and a unit such as 80GB`},
		{by, "-5GB", "want a number"},
		{by, "GB", "want a number"},
		{by, "", "want a number"},
		{by, "1e999GB", "out of range"},
		{by, "NaNGB", "want a number"},
		{du, "5", `bad duration "5"`},
		{du, "1e12h", "out of range"},
		{du, "-1s", "bad duration"},
		{ra, "10", `bad rate "10": want a number and a unit such as 10/s`},
		{ra, "20/hour", `bad rate "20/hour": want a number and a unit such as 10/s (units: /s, /min, /m, /h)`},
		{du, "500msec", `bad duration "500msec": want a number and a unit such as 150ms (units: ns, us, µs, μs, ms, s, m, min, h)`},
		{by, "80gb", `(units: B, KB, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)`},
		{fl, "989.5", "such as 989.5TFLOPS"},
		{fl, "1TB", "bad FLOPS"},
	}
	for _, tt := range tests {
		err := tt.parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse(%q) error = %v; want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func by(s string) error { _, err := ParseBytes(s); return err }
func bw(s string) error { _, err := ParseBandwidth(s); return err }
func du(s string) error { _, err := ParseDuration(s); return err }
func ra(s string) error { _, err := ParseRate(s); return err }
func fl(s string) error { _, err := ParseFLOPS(s); return err }

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatBytes(80e9), "80GB"},
		{FormatBytes(141.2e9), "141.2GB"},
		{FormatBytes(0), "0B"},
		{FormatBytes(512), "512B"},
		{FormatBytes(0.5), "0.5B"},
		{FormatBytes(103079215104), "103.079215104GB"},
		{FormatBytes(2e18), "2000PB"},
		{FormatBytes(-3e6), "-3MB"},
		{FormatBandwidth(3.35e12), "3.35TB/s"},
		{FormatBandwidth(21e15), "21PB/s"},
		{FormatBandwidth(12.5e9), "12.5GB/s"},
		{FormatFLOPS(989.5e12), "989.5TFLOPS"},
		{FormatFLOPS(1.2e15), "1.2PFLOPS"},
		{FormatRate(10), "10/s"},
		{FormatRate(0.5), "0.5/s"},
		{FormatRate(1e-9), "1e-9/s"},
		{FormatDuration(0), "0s"},
		{FormatDuration(2e9), "2s"},
		{FormatDuration(1_500_000_000), "1.5s"},
		{FormatDuration(150e6), "150ms"},
		{FormatDuration(10e3), "10us"},
		{FormatDuration(5), "5ns"},
		{FormatDuration(1001), "1.001us"},
		{FormatDuration(90e9), "90s"},
		{FormatDuration(120e9), "2m"},
		{FormatDuration(7200e9), "2h"},
		{FormatDuration(-150e6), "-150ms"},
		{FormatDuration(math.MinInt64), "-9223372036.854775808s"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

// TestFormatRoundTrip checks that parsing formatted text gives back the exact
// value, including values whose decimal text is not exactly representable.
func TestFormatRoundTrip(t *testing.T) {
	vals := []float64{0, 1, 0.1, 3.35e12, 989.5e12, 1.0 / 3, 2.9e12, 1e-7, 123456789.123, 7e30, math.MaxFloat64, 5e-324}
	for _, v := range vals {
		for _, c := range []struct {
			format func(float64) string
			parse  func(string) (float64, error)
		}{{FormatBytes, ParseBytes}, {FormatBandwidth, ParseBandwidth}, {FormatFLOPS, ParseFLOPS}, {FormatRate, ParseRate}} {
			s := c.format(v)
			got, err := c.parse(s)
			if err != nil || got != v {
				t.Errorf("parse(format(%v)) = parse(%q) = %v, %v", v, s, got, err)
			}
		}
	}
	for _, ns := range []int64{0, 1, 999, 1001, 1_500_000, 90e9, 3600e9, math.MaxInt64 - 1} {
		s := FormatDuration(ns)
		if got, err := ParseDuration(s); err != nil || got != ns {
			t.Errorf("ParseDuration(FormatDuration(%d) = %q) = %d, %v", ns, s, got, err)
		}
	}
}
