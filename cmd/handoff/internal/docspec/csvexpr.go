package docspec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// csvCall computes a function of a row's CSV records (in order):
//
//	one(f)          f, which must be the same in every record
//	min(f), max(f)  the least and greatest f
//	at(f, k=v)      f in the record whose column k is v
//	last(f, cond)   f in the last record of the leading run that meets cond
//	next(f, cond)   f in the record after that run (missing if none)
//
// A cond is a column that is true, or "column OP number" with OP one of
// >=, <=, >, <, =.
func csvCall(recs []map[string]string, name string, args []string) (value, error) {
	if len(args) == 0 || args[0] == "" {
		return value{}, fmt.Errorf("%s(): want a column", name)
	}
	switch {
	case name == "one" && len(args) == 1:
		return csvOne(recs, args[0])
	case (name == "min" || name == "max") && len(args) == 1:
		return csvExtreme(recs, args[0], name == "max")
	case name == "at" && len(args) == 2:
		return csvAt(recs, args[0], args[1])
	case (name == "last" || name == "next") && len(args) == 2:
		return csvRun(recs, args[0], args[1], name == "next")
	}
	return value{}, fmt.Errorf("%s(%s): no such function on CSV records", name, strings.Join(args, ", "))
}

// field returns a record's column as a value.
func field(rec map[string]string, col string) (value, error) {
	s, ok := rec[col]
	if !ok {
		return value{}, fmt.Errorf("no column %q", col)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return number(f), nil
	}
	return value{str: s, isStr: true}, nil
}

// csvOne returns the column's one value over the records.
func csvOne(recs []map[string]string, col string) (value, error) {
	if len(recs) == 0 {
		return value{}, fmt.Errorf("%s: no records", col)
	}
	v, err := field(recs[0], col)
	for _, r := range recs[1:] {
		if r[col] != recs[0][col] {
			return value{}, fmt.Errorf("%s differs between the row's records (%s, %s)", col, recs[0][col], r[col])
		}
	}
	return v, err
}

// csvExtreme returns the column's least or greatest number.
func csvExtreme(recs []map[string]string, col string, greatest bool) (value, error) {
	var best value
	for i, r := range recs {
		v, err := field(r, col)
		if err != nil || v.isStr {
			return value{}, fmt.Errorf("%s: %v is not a number (%v)", col, r[col], err)
		}
		if i == 0 || (greatest && v.num > best.num) || (!greatest && v.num < best.num) {
			best = v
		}
	}
	return best, nil
}

// csvAt returns col in the record whose column k is v ("k=v").
func csvAt(recs []map[string]string, col, kv string) (value, error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return value{}, fmt.Errorf("at(%s, %s): want column=value", col, kv)
	}
	i := slices.IndexFunc(recs, func(r map[string]string) bool { return r[k] == v })
	if i < 0 {
		return value{}, fmt.Errorf("at(%s, %s): no record has %s", col, kv, kv)
	}
	return field(recs[i], col)
}

// csvRun returns col at the end of the leading run of records that meet
// cond, or in the record after it.
func csvRun(recs []map[string]string, col, cond string, after bool) (value, error) {
	n := 0
	for ; n < len(recs); n++ {
		ok, err := meets(recs[n], cond)
		if err != nil {
			return value{}, err
		}
		if !ok {
			break
		}
	}
	i := n - 1
	if after {
		i = n
	}
	if i < 0 || i >= len(recs) {
		return value{missing: true}, nil
	}
	return field(recs[i], col)
}

// meets evaluates a condition on a record.
func meets(rec map[string]string, cond string) (bool, error) {
	m := condRe.FindStringSubmatch(cond)
	if m == nil {
		v, ok := rec[cond]
		if !ok {
			return false, fmt.Errorf("condition %q: no such column", cond)
		}
		return v == "true", nil
	}
	x, err := field(rec, m[1])
	y, err2 := strconv.ParseFloat(m[3], 64)
	if err != nil || err2 != nil || x.isStr {
		return false, fmt.Errorf("condition %q: want a numeric column and a number", cond)
	}
	switch m[2] {
	case ">=":
		return x.num >= y, nil
	case "<=":
		return x.num <= y, nil
	case ">":
		return x.num > y, nil
	case "<":
		return x.num < y, nil
	}
	return x.num == y, nil
}
