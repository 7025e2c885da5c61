package docspec

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// RowData is what a row's columns are computed from: its command's
// summary.json, or the records of a CSV it wrote (selected by the row's
// where and sorted by the spec's order), and the records each source joins
// to the row.
type RowData struct {
	Summary map[string]any
	Records []map[string]string
	Sources map[string][]map[string]string
}

// value is an expression's result: a number, a string, or missing (as
// the row after the last one).
type value struct {
	num     float64
	str     string
	isStr   bool
	missing bool
}

// number makes a numeric value.
func number(v float64) value { return value{num: v} }

var (
	callRe = regexp.MustCompile(`^(?:([a-z_]+):)?([a-z_]+)\((.*)\)$`)
	condRe = regexp.MustCompile(`^([\w.]+)\s*(>=|<=|>|<|=)\s*(\S+)$`)
)

// eval computes an expression: a term, or two terms divided ("a / b"). A
// term is a number, a field (a dotted summary.json path, or a CSV column
// that has one value in the row's records) or a function call, optionally
// on a source ("plan:one(cost_per_hour)").
func (d *RowData) eval(expr string) (value, error) {
	if a, b, ok := strings.Cut(expr, " / "); ok {
		x, err := d.eval(strings.TrimSpace(a))
		if err != nil {
			return x, err
		}
		y, err := d.eval(strings.TrimSpace(b))
		if err != nil || x.missing || y.missing {
			return value{missing: true}, err
		}
		return number(x.num / y.num), nil
	}
	return d.term(strings.TrimSpace(expr))
}

// term computes one term.
func (d *RowData) term(t string) (value, error) {
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		return number(v), nil
	}
	m := callRe.FindStringSubmatch(t)
	if m == nil {
		if d.Summary != nil {
			return d.path(t)
		}
		return csvOne(d.Records, t)
	}
	recs := d.Records
	if m[1] != "" {
		var ok bool
		if recs, ok = d.Sources[m[1]]; !ok {
			return value{}, fmt.Errorf("%s: no source %q", t, m[1])
		}
	}
	args := strings.Split(m[3], ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	if d.Summary != nil && m[1] == "" {
		return d.summaryCall(m[2], args)
	}
	return csvCall(recs, m[2], args)
}

// summaryCall computes a function of summary.json: sum(path) adds the
// numbers a path reaches through lists; owners(part) lists each owner's
// share of the attribution's part (ttft_s, decode_s or total_s).
func (d *RowData) summaryCall(name string, args []string) (value, error) {
	switch {
	case name == "sum" && len(args) == 1:
		total := 0.0
		for _, v := range walk(d.Summary, strings.Split(args[0], ".")) {
			f, ok := v.(float64)
			if !ok {
				return value{}, fmt.Errorf("sum(%s): %v is not a number", args[0], v)
			}
			total += f
		}
		return number(total), nil
	case name == "owners" && len(args) == 1:
		return d.owners(args[0])
	}
	return value{}, fmt.Errorf("%s(%s): want sum(path) or owners(part) on summary.json", name, strings.Join(args, ", "))
}

// path looks a dotted path up in summary.json.
func (d *RowData) path(p string) (value, error) {
	found := walk(d.Summary, strings.Split(p, "."))
	if len(found) != 1 {
		return value{}, fmt.Errorf("summary.json has no single %s", p)
	}
	switch v := found[0].(type) {
	case float64:
		return number(v), nil
	case string:
		return value{str: v, isStr: true}, nil
	}
	return value{}, fmt.Errorf("summary.json's %s is not a number or a string", p)
}

// walk returns what the path reaches from v, through every element of the
// lists on the way; an element name[key=value] keeps, of the list name
// holds, the elements whose key is value (instances[role=decode]).
func walk(v any, path []string) []any {
	if len(path) == 0 {
		return []any{v}
	}
	switch x := v.(type) {
	case map[string]any:
		name, key, want, filtered := splitFilter(path[0])
		next, ok := x[name]
		if ok && filtered {
			next = keep(next, key, want)
		}
		if ok {
			return walk(next, path[1:])
		}
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, walk(e, path)...)
		}
		return out
	}
	return nil
}

// splitFilter splits a path element name[key=value].
func splitFilter(elem string) (name, key, value string, ok bool) {
	name, rest, ok := strings.Cut(elem, "[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return elem, "", "", false
	}
	key, value, ok = strings.Cut(strings.TrimSuffix(rest, "]"), "=")
	return name, key, value, ok
}

// keep is the elements of list v whose key holds value (a string).
func keep(v any, key, value string) any {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out []any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m[key] == value {
			out = append(out, e)
		}
	}
	return out
}

// owners renders each owner's share of the attribution's part, largest
// first (ties by name), as whole percentages: "nvidia 94%, nobody 6%".
func (d *RowData) owners(part string) (value, error) {
	found := walk(d.Summary, []string{"attribution", "by_owner"})
	if len(found) != 1 {
		return value{}, fmt.Errorf("owners(%s): summary.json has no attribution.by_owner", part)
	}
	byOwner, _ := found[0].(map[string]any)
	type share struct {
		owner string
		s     float64
	}
	var shares []share
	total := 0.0
	for owner, t := range byOwner {
		got := walk(t, []string{part})
		v, ok := 0.0, len(got) == 1
		if ok {
			v, ok = got[0].(float64)
		}
		if !ok {
			return value{}, fmt.Errorf("owners(%s): owner %s has no %s", part, owner, part)
		}
		shares, total = append(shares, share{owner, v}), total+v
	}
	if total == 0 {
		return value{str: "-", isStr: true}, nil
	}
	slices.SortFunc(shares, func(x, y share) int { return cmp.Or(cmp.Compare(y.s, x.s), cmp.Compare(x.owner, y.owner)) })
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("%s %.0f%%", s.owner, 100*s.s/total)
	}
	return value{str: strings.Join(parts, ", "), isStr: true}, nil
}
