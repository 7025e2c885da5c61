package units

import (
	"math"
	"strconv"
)

// formatSI writes v with the largest decimal prefix (up to P) not above its
// magnitude, followed by the prefix and suffix.
func formatSI(v float64, suffix string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64) + suffix
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	mag := shortest(v).magnitude()
	p := decimalPrefixes[0]
	for _, q := range decimalPrefixes[:len(decimalPrefixes)-1] { // no exa
		if v != 0 && mag >= q.exp10 {
			p = q
		}
	}
	return sign + scaled(v, p.exp10) + p.prefix + suffix
}

// scaled writes v ÷ 10^shift exactly, switching to scientific notation for
// very large or small results so the text stays short.
func scaled(v float64, shift int) string {
	d := shortest(v)
	m := d.magnitude() - shift
	if v != 0 && (m < -6 || m > 21) {
		digits := d.digits
		s := digits[:1]
		if len(digits) > 1 {
			s += "." + digits[1:]
		}
		return s + "e" + strconv.Itoa(m)
	}
	return d.text(shift)
}

// FormatBytes writes a byte count in decimal units: 80e9 → "80GB",
// 3.5e6 → "3.5MB", 512 → "512B". ParseBytes of the result returns b.
func FormatBytes(b float64) string { return formatSI(b, "B") }

// FormatBandwidth writes bytes per second in decimal byte units:
// 3.35e12 → "3.35TB/s". ParseBandwidth of the result returns bps.
func FormatBandwidth(bps float64) string { return formatSI(bps, "B/s") }

// FormatFLOPS writes FLOP/s with a decimal prefix: 989.5e12 → "989.5TFLOPS".
// ParseFLOPS of the result returns f.
func FormatFLOPS(f float64) string { return formatSI(f, "FLOPS") }

// FormatRate writes events per second: 10 → "10/s", 0.5 → "0.5/s".
// ParseRate of the result returns r.
func FormatRate(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return strconv.FormatFloat(r, 'g', -1, 64) + "/s"
	}
	if r < 0 {
		return "-" + scaled(-r, 0) + "/s"
	}
	return scaled(r, 0) + "/s"
}

// Nanoseconds in the units FormatDuration uses.
const (
	nsPerMinute = 60 * 1_000_000_000
	nsPerHour   = 60 * nsPerMinute
)

// FormatDuration writes nanoseconds as whole hours or minutes when exact
// ("1h", "30m"), else in the largest of s, ms, us, ns not above the value
// ("1.5s", "150ms", "10us", "5ns"); 0 is "0s". ParseDuration of the result
// returns ns.
func FormatDuration(ns int64) string {
	if ns < 0 {
		return "-" + formatPositiveNs(uint64(-(ns+1))+1)
	}
	return formatPositiveNs(uint64(ns))
}

func formatPositiveNs(ns uint64) string {
	switch {
	case ns == 0:
		return "0s"
	case ns%nsPerHour == 0:
		return strconv.FormatUint(ns/nsPerHour, 10) + "h"
	case ns%nsPerMinute == 0:
		return strconv.FormatUint(ns/nsPerMinute, 10) + "m"
	}
	d := decimal{digits: strconv.FormatUint(ns, 10)}
	for _, u := range []struct {
		name  string
		exp10 int
	}{{"s", 9}, {"ms", 6}, {"us", 3}} {
		if d.magnitude() >= u.exp10 {
			return d.text(u.exp10) + u.name
		}
	}
	return d.text(0) + "ns"
}
