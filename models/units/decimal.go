package units

import (
	"strconv"
	"strings"
)

// decimal is a non-negative number kept as the text the user wrote, split
// into digits and a power of ten, so that scaling by a decimal unit (GB, ms)
// is exact: "3.35" with unit TB becomes ParseFloat("335e10"), one correctly
// rounded conversion instead of a float multiplication.
type decimal struct {
	digits string // decimal digits without a point, possibly with leading zeros
	exp10  int    // value = digits × 10^exp10
}

// maxExp10 bounds the exponent a user may write; larger values are certainly
// out of range and would make the exponent arithmetic overflow.
const maxExp10 = 400

// splitNumber splits s into a leading unsigned decimal number (digits, an
// optional fraction and an optional exponent) and the rest. ok is false when
// s does not start with a number.
func splitNumber(s string) (d decimal, rest string, ok bool) {
	i, intDigits := scanDigits(s, 0)
	frac := ""
	if i < len(s) && s[i] == '.' {
		j, f := scanDigits(s, i+1)
		frac, i = f, j
	}
	if intDigits == "" && frac == "" {
		return decimal{}, s, false
	}
	d = decimal{digits: intDigits + frac, exp10: -len(frac)}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if e, j, eok := scanExponent(s, i+1); eok {
			d.exp10 += e
			i = j
		}
	}
	return d, s[i:], true
}

// scanDigits returns the run of ASCII digits starting at i and the index
// after it.
func scanDigits(s string, i int) (int, string) {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j, s[i:j]
}

// scanExponent reads an optional sign and digits starting at i. ok is false
// (and nothing is consumed) when no digits follow, so "5e" is not a number
// with an exponent.
func scanExponent(s string, i int) (exp, end int, ok bool) {
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j, ds := scanDigits(s, i)
	if ds == "" || len(ds) > 4 {
		return 0, 0, false
	}
	e, _ := strconv.Atoi(ds)
	if neg {
		e = -e
	}
	return e, j, true
}

// float returns d × 10^shift, correctly rounded. ok is false when the result
// overflows float64.
func (d decimal) float(shift int) (float64, bool) {
	e := d.exp10 + shift
	if e > maxExp10 || e < -maxExp10-len(d.digits) {
		if strings.Trim(d.digits, "0") == "" {
			return 0, true
		}
		return 0, e < 0
	}
	v, err := strconv.ParseFloat(d.digits+"e"+strconv.Itoa(e), 64)
	return v, err == nil
}

// shortest returns the shortest decimal that parses back to v (v ≥ 0 and
// finite).
func shortest(v float64) decimal {
	s := strconv.FormatFloat(v, 'e', -1, 64) // "3.35e+12"
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText)
	intPart, frac, _ := strings.Cut(mant, ".")
	return decimal{digits: intPart + frac, exp10: exp - len(frac)}
}

// magnitude is the power of ten of d's leading digit (v = 3.35e12 gives 12);
// 0 for zero.
func (d decimal) magnitude() int {
	t := strings.TrimLeft(d.digits, "0")
	if t == "" {
		return 0
	}
	return len(t) - 1 + d.exp10
}

// text renders d × 10^-shift in plain positional notation with no exponent
// and no trailing zeros after the point: exact, since only the point moves.
func (d decimal) text(shift int) string {
	digits := strings.TrimLeft(d.digits, "0")
	if digits == "" {
		return "0"
	}
	e := d.exp10 - shift
	if e >= 0 {
		return digits + strings.Repeat("0", e)
	}
	point := len(digits) + e // digits before the point
	if point <= 0 {
		digits = strings.Repeat("0", 1-point) + digits
		point = 1
	}
	intPart, frac := digits[:point], strings.TrimRight(digits[point:], "0")
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}
