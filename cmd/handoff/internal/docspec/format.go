package docspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// missingCell is what a cell shows when a value does not exist (the rate
// after the last one of a sweep).
const missingCell = "—"

// units scale a value from its summary.json or CSV unit (seconds,
// fractions, bytes) to the column's.
var units = map[string]float64{"": 1, "ms": 1e3, "%": 100, "GB": 1e-9, "TB": 1e-12}

// formatters are the named formatters, for cells a format string cannot
// describe.
var formatters = map[string]func([]value) (string, error){
	"rate_scale_attainment": rateScaleAttainment,
}

// formatCell renders a cell's values: scaled to unit, then printed by a
// named formatter or by format's verbs, one per value. Verbs: %d (rounded
// to an integer), %,d (the same with thousands separators), %s, and the
// float verbs (%.2f, %.4g, ...); %% is a percent sign. A missing value
// makes the cell "—".
func formatCell(format, unit string, vals []value) (string, error) {
	scale, ok := units[unit]
	if !ok {
		return "", fmt.Errorf("unknown unit %q (want ms, %%, GB, TB or none)", unit)
	}
	for i := range vals {
		if vals[i].missing {
			return missingCell, nil
		}
		vals[i].num *= scale
	}
	if f, ok := formatters[format]; ok {
		return f(vals)
	}
	return printf(format, vals)
}

// printf renders vals with format's verbs.
func printf(format string, vals []value) (string, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte(".,0123456789+-# ", format[j]) >= 0 {
			j++
		}
		if j == len(format) {
			return "", fmt.Errorf("format %q: verb at its end", format)
		}
		if format[j] == '%' {
			b.WriteByte('%')
			i = j
			continue
		}
		if n == len(vals) {
			return "", fmt.Errorf("format %q: more verbs than the %d values", format, len(vals))
		}
		s, err := verb(format[i:j+1], vals[n])
		if err != nil {
			return "", fmt.Errorf("format %q: %v", format, err)
		}
		b.WriteString(s)
		i, n = j, n+1
	}
	if n != len(vals) {
		return "", fmt.Errorf("format %q: %d verbs for %d values", format, n, len(vals))
	}
	return b.String(), nil
}

// verb renders one value with one verb.
func verb(v string, x value) (string, error) {
	kind := v[len(v)-1]
	if x.isStr != (kind == 's') {
		return "", fmt.Errorf("%s for %v", v, x.show())
	}
	switch kind {
	case 's':
		return fmt.Sprintf(v, x.str), nil
	case 'd':
		n := int64(math.Round(x.num))
		if strings.Contains(v, ",") {
			return thousands(n), nil
		}
		return fmt.Sprintf(v, n), nil
	case 'f', 'g', 'e':
		return fmt.Sprintf(v, x.num), nil
	}
	return "", fmt.Errorf("unknown verb %s", v)
}

// show describes a value for messages.
func (x value) show() string {
	if x.isStr {
		return strconv.Quote(x.str)
	}
	return strconv.FormatFloat(x.num, 'g', -1, 64)
}

// thousands prints n with a comma between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// rateScaleAttainment renders a rate (req/s), its rate scale and its
// attainment (a fraction) as "21.8 req/s (×90, 94.8%)", leaving the
// attainment out when it is 100%.
func rateScaleAttainment(vals []value) (string, error) {
	if len(vals) != 3 || vals[0].isStr || vals[1].isStr || vals[2].isStr {
		return "", fmt.Errorf("rate_scale_attainment: want a rate, a scale and an attainment")
	}
	s := fmt.Sprintf("%.3g req/s (×%g", vals[0].num, vals[1].num)
	if vals[2].num < 1 {
		s += fmt.Sprintf(", %.1f%%", 100*vals[2].num)
	}
	return s + ")", nil
}
