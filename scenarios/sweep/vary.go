package sweep

import (
	"fmt"
	"slices"
	"strings"
)

// ParseVary reads a --vary flag, "path=v1,v2,...", into a grid axis.
// Values are split at commas outside brackets, braces and quotes, so a
// value may be a flow mapping: "pools.decode.engine={max_num_seqs: 64},{max_num_seqs: 128}".
// Blanks around values are dropped.
func ParseVary(s string) (Axis, error) {
	path, list, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok {
		return Axis{}, fmt.Errorf("--vary %q: want path=v1,v2,..., e.g. pools.decode.count=1,2,4", s)
	}
	if err := checkPath(path); err != nil {
		return Axis{}, fmt.Errorf("--vary %q: %v", s, err)
	}
	values, err := splitValues(list)
	if err != nil {
		return Axis{}, fmt.Errorf("--vary %s: %v", path, err)
	}
	return Axis{Path: path, Values: values, vary: true}, nil
}

// splitValues splits a comma-separated list at top-level commas.
func splitValues(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("empty value list")
	}
	var out []string
	depth, quote, start := 0, rune(0), 0
	escaped := false
	for i, r := range list {
		switch {
		case escaped:
			escaped = false
		case quote != 0:
			escaped = quote == '"' && r == '\\'
			if r == quote {
				quote = 0
			}
		case (r == '"' || r == '\'') && (depth > 0 || strings.TrimSpace(list[start:i]) == ""):
			quote = r // quotes open a scalar; an apostrophe inside one ("it's") is text
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
		case r == ',' && depth == 0:
			out = append(out, list[start:i])
			start = i + 1
		}
		if depth < 0 {
			return nil, fmt.Errorf("unbalanced %q", r)
		}
	}
	if depth != 0 || quote != 0 {
		return nil, fmt.Errorf("unclosed bracket, brace or quote")
	}
	out = append(out, list[start:])
	for i, v := range out {
		if out[i] = strings.TrimSpace(v); out[i] == "" {
			return nil, fmt.Errorf("value %d of %d is empty", i+1, len(out))
		}
	}
	return out, nil
}

// FieldFunc returns the field a dotted scenario path names, spelt one way
// whatever the spelling of the path ("pools.prefill.count" and
// "pools.0.count" are both "pools[0].count"), or an error when the path
// names no field. The scenario package's Loaded.FieldPath is one.
type FieldFunc func(path string) (string, error)

// WithVary returns a copy of s with the axes added to its grid: an axis
// that names the same field as one of the file's grid axes replaces it in
// place, others are appended in order. field resolves every path, the
// file's and the flags', so that Validate refuses two axes naming one
// field however each spells it; nil compares paths as written. An axis
// whose path names no field is an error placed as Validate's are. s is not
// changed.
func (s Spec) WithVary(field FieldFunc, axes ...Axis) (Spec, error) {
	var err error
	if s.Grid, err = resolveAxes(s.Grid, "grid", field); err != nil {
		return s, err
	}
	if s.Zip, err = resolveAxes(s.Zip, "zip", field); err != nil {
		return s, err
	}
	vary, err := resolveAxes(axes, "grid", field)
	if err != nil {
		return s, err
	}
	for _, ax := range vary {
		i := slices.IndexFunc(s.Grid, func(g Axis) bool { return !g.vary && g.key() == ax.key() })
		if i >= 0 {
			s.Grid[i] = ax
		} else {
			s.Grid = append(s.Grid, ax)
		}
	}
	return s, nil
}

// resolveAxes returns a copy of axes with their fields resolved.
func resolveAxes(axes Axes, section string, field FieldFunc) (Axes, error) {
	out := slices.Clone(axes)
	if field == nil {
		return out, nil
	}
	for i := range out {
		if err := checkPath(out[i].Path); err != nil {
			continue // Validate reports it, naming the path
		}
		f, err := field(out[i].Path)
		if err != nil {
			return nil, sited{out[i], section}.errorf("%v", err)
		}
		out[i].named = f
	}
	return out, nil
}

// key is what two axes share when they vary the same field: the resolved
// field, else the path as written.
func (a Axis) key() string {
	if a.named != "" {
		return a.named
	}
	return a.Path
}
