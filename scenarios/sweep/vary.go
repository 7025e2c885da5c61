package sweep

import (
	"fmt"
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

// WithVary returns a copy of s with the axes added to its grid: an axis
// whose path the grid already has replaces it in place, others are
// appended in order. s is not changed.
func (s Spec) WithVary(axes ...Axis) Spec {
	grid := append(Axes(nil), s.Grid...)
	for _, ax := range axes {
		i := 0
		for i < len(grid) && grid[i].Path != ax.Path {
			i++
		}
		if i < len(grid) {
			grid[i] = ax
		} else {
			grid = append(grid, ax)
		}
	}
	s.Grid = grid
	return s
}
