// Package units parses and formats the quantities that scenario and catalog
// files write with explicit units: bytes ("80GB"), bandwidth ("3.35TB/s",
// "400Gb/s"), durations ("150ms"), rates ("10/s") and compute ("989.5TFLOPS").
// It also provides YAML scalar types for each, which decode from and encode to
// the canonical text form, so a decoded file can be written back unchanged in
// meaning.
//
// Conventions: all prefixes are decimal (1 GB = 1e9 B) except the IEC ones
// (KiB, MiB, GiB, TiB, PiB = powers of 1024); a lower-case "b" means bits
// (8 bits = 1 byte); durations are integer nanoseconds. Decimal scaling is
// exact: "3.35TB/s" is the float64 nearest 3.35e12, and formatting a value
// then parsing the text gives the same value back.
package units

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// unit is one accepted suffix: value = number × 10^exp10 × mul ÷ div.
type unit struct {
	name  string
	exp10 int
	mul   float64 // 0 means 1
	div   float64 // 0 means 1
}

// quantity describes one kind of value: its name for errors, an example of
// good input, and its accepted units.
type quantity struct {
	kind    string
	example string
	units   []unit
}

var (
	bytesUnits = []unit{
		{name: "B"}, {name: "KB", exp10: 3}, {name: "kB", exp10: 3}, {name: "MB", exp10: 6},
		{name: "GB", exp10: 9}, {name: "TB", exp10: 12}, {name: "PB", exp10: 15},
		{name: "KiB", mul: 1 << 10}, {name: "MiB", mul: 1 << 20}, {name: "GiB", mul: 1 << 30},
		{name: "TiB", mul: 1 << 40}, {name: "PiB", mul: 1 << 50},
	}
	bytesQ     = quantity{"bytes", "80GB", bytesUnits}
	bandwidthQ = quantity{"bandwidth", "50GB/s", bandwidthUnits()}
	durationQ  = quantity{"duration", "150ms", []unit{
		{name: "ns"}, {name: "us", exp10: 3}, {name: "µs", exp10: 3}, {name: "μs", exp10: 3},
		{name: "ms", exp10: 6}, {name: "s", exp10: 9}, {name: "m", exp10: 9, mul: 60},
		{name: "min", exp10: 9, mul: 60}, {name: "h", exp10: 9, mul: 3600},
	}}
	rateQ = quantity{"rate", "10/s", []unit{
		{name: "/s"}, {name: "/min", div: 60}, {name: "/m", div: 60}, {name: "/h", div: 3600},
	}}
	flopsQ = quantity{"FLOPS", "989.5TFLOPS", flopsUnits()}
)

// bandwidthUnits lists byte units per second and bit units per second (÷8).
func bandwidthUnits() []unit {
	var us []unit
	for _, u := range bytesUnits {
		us = append(us, unit{name: u.name + "/s", exp10: u.exp10, mul: u.mul})
	}
	bits := []struct {
		prefix string
		exp10  int
	}{{"", 0}, {"K", 3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}}
	for _, b := range bits {
		us = append(us, unit{name: b.prefix + "b/s", exp10: b.exp10, div: 8},
			unit{name: b.prefix + "bps", exp10: b.exp10, div: 8})
	}
	return us
}

// decimalPrefixes are the SI prefixes used when formatting, smallest first.
var decimalPrefixes = []struct {
	prefix string
	exp10  int
}{{"", 0}, {"K", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}}

// flopsUnits lists FLOPS with decimal prefixes, also spelt FLOP/s.
func flopsUnits() []unit {
	var us []unit
	for _, p := range decimalPrefixes {
		us = append(us, unit{name: p.prefix + "FLOPS", exp10: p.exp10},
			unit{name: p.prefix + "FLOP/s", exp10: p.exp10})
	}
	return us
}

// parse reads "number unit" for q. Negative numbers, a missing or unknown
// unit, and values beyond float64 are errors.
func (q quantity) parse(s string) (float64, error) {
	d, rest, ok := splitNumber(strings.TrimSpace(s))
	if !ok {
		return 0, q.bad(s)
	}
	rest = strings.TrimSpace(rest)
	for _, u := range q.units {
		if u.name != rest {
			continue
		}
		v, ok := d.float(u.exp10)
		if u.mul != 0 {
			v *= u.mul
		}
		if u.div != 0 {
			v /= u.div
		}
		if !ok || math.IsInf(v, 0) {
			return 0, fmt.Errorf("bad %s %q: out of range", q.kind, s)
		}
		return v, nil
	}
	return 0, q.bad(s)
}

// bad is the error of s, which is not a q: it lists q's units, so that
// a unit handoff does not know ("20/hour") is answered with the ones it
// does.
func (q quantity) bad(s string) error {
	return fmt.Errorf("bad %s %q: want a number and a unit such as %s (units: %s)", q.kind, s, q.example, q.unitNames())
}

// unitNames lists q's units, comma-separated, in the table's order.
func (q quantity) unitNames() string {
	names := make([]string, len(q.units))
	for i, u := range q.units {
		names[i] = u.name
	}
	return strings.Join(names, ", ")
}

// ParseBytes parses a size such as "80GB", "1.5TB" or "96GiB" into bytes.
// Units: B, KB (kB), MB, GB, TB, PB (powers of 1000) and KiB, MiB, GiB, TiB,
// PiB (powers of 1024).
func ParseBytes(s string) (float64, error) { return bytesQ.parse(s) }

// ParseBandwidth parses a transfer rate into bytes per second. Byte units:
// "50GB/s", "3.35TB/s", "21PB/s", "10GiB/s"; bit units (divided by 8):
// "400Gb/s", "100Gbps".
func ParseBandwidth(s string) (float64, error) { return bandwidthQ.parse(s) }

// ParseFLOPS parses a compute rate such as "989.5TFLOPS", "1.2PFLOPS" or
// "500GFLOP/s" into floating-point operations per second.
func ParseFLOPS(s string) (float64, error) { return flopsQ.parse(s) }

// ParseRate parses an event rate such as "10/s", "600/min", "0.5/s" or
// "36000/h" into events per second.
func ParseRate(s string) (float64, error) { return rateQ.parse(s) }

// ParseDuration parses a duration such as "2s", "150ms", "10us", "5ns",
// "1.5m" or "1h" into integer nanoseconds, rounded to the nearest (halves
// away from zero). A bare "0" is allowed; any other number needs a unit. The
// arithmetic is exact, so every int64 value survives FormatDuration and back.
func ParseDuration(s string) (int64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	d, rest, ok := splitNumber(strings.TrimSpace(s))
	if !ok {
		return 0, durationQ.bad(s)
	}
	rest = strings.TrimSpace(rest)
	for _, u := range durationQ.units {
		if u.name == rest {
			if ns, ok := d.nanoseconds(u); ok {
				return ns, nil
			}
			return 0, fmt.Errorf("bad duration %q: out of range (at most about 292 years)", s)
		}
	}
	return 0, durationQ.bad(s)
}

// nanoseconds returns d in unit u (whose value is 10^exp10 × mul ns) as a
// rounded int64; ok is false on overflow.
func (d decimal) nanoseconds(u unit) (int64, bool) {
	n, ok := new(big.Int).SetString(d.digits, 10)
	if !ok {
		return 0, false
	}
	if u.mul != 0 {
		n.Mul(n, big.NewInt(int64(u.mul)))
	}
	e := d.exp10 + u.exp10
	switch {
	case n.Sign() == 0 || e < -maxExp10:
		return 0, true
	case e > 19:
		return 0, false
	case e >= 0:
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
	default:
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil)
		n.Add(n.Lsh(n, 1), div) // round half up: (2n + div) / (2 div)
		n.Quo(n, div.Lsh(div, 1))
	}
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}
