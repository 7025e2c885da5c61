package strictyaml

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	// (?s) throughout: a key or a value may span lines (a quoted key "a\nb";
	// a plain scalar folds "0\n\n0" to "0\n0"). The messages built from
	// them quote the value, and FieldError.Error escapes line breaks.
	unknownFieldRe = regexp.MustCompile(`(?s)^field (.+) not found in type (\S+)$`)
	duplicateRe    = regexp.MustCompile(`(?s)^mapping key "(.*)" already defined at line (\d+)$`)
	wrongTypeRe    = regexp.MustCompile("(?s)^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
)

// convert turns a yaml.v3 decoding error into a *FieldError for the first
// offending line.
func convert(root *yaml.Node, file string, v any, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return syntaxError(file, err)
	}
	first, firstLine := "", 0
	for _, e := range te.Errors {
		if line, _ := splitLine(e); first == "" || line < firstLine {
			first, firstLine = e, line
		}
	}
	line, msg := splitLine(first)
	fe := &FieldError{File: file, Line: line, Msg: msg}
	if m := unknownFieldRe.FindStringSubmatch(msg); m != nil {
		fe.Field, _ = pathOf(root, func(n *yaml.Node, isKey bool) bool {
			return isKey && n.Line == line && n.Value == m[1]
		})
		fe.Msg = "unknown field" + suggest(m[1], knownKeys(reflect.TypeOf(v), parent(fe.Field)))
		return fe
	}
	if m := duplicateRe.FindStringSubmatch(msg); m != nil {
		fe.Field, _ = pathOf(root, func(n *yaml.Node, isKey bool) bool {
			return isKey && n.Line == line && n.Value == m[1]
		})
		fe.Msg = "duplicate key (first defined at line " + m[2] + ")"
		return fe
	}
	fe.Field = valuePath(root, line, msg)
	if m := wrongTypeRe.FindStringSubmatch(msg); m != nil {
		fe.Msg = wrongType(m[1], m[2], m[3])
	}
	return fe
}

// valuePath finds the value on line whose text the message quotes (several
// values can share a line in a flow mapping), else the first value on line.
func valuePath(root *yaml.Node, line int, msg string) string {
	onLine := func(n *yaml.Node) bool { return n.Line == line && n.Kind == yaml.ScalarNode }
	if p, ok := pathOf(root, func(n *yaml.Node, isKey bool) bool {
		return !isKey && onLine(n) && quotes(msg, n.Value)
	}); ok {
		return p
	}
	p, _ := pathOf(root, func(n *yaml.Node, isKey bool) bool { return !isKey && n.Line == line })
	return p
}

// quotes reports whether msg quotes value the way yaml.v3 or the units
// package do: %q, or in back quotes, shortened to 7 characters past 10.
func quotes(msg, value string) bool {
	short := value
	if len(short) > 10 {
		short = short[:7] + "..."
	}
	return strings.Contains(msg, strconv.Quote(value)) || strings.Contains(msg, "`"+short+"`")
}

// wrongType rewrites yaml.v3's "cannot unmarshal !!str `abc` into int" as
// `want an integer, got "abc"`.
func wrongType(tag, value, goType string) string {
	want := "want a value of type " + goType
	switch {
	case strings.Contains(goType, "int"):
		want = "want an integer"
	case strings.HasPrefix(goType, "float"):
		want = "want a number"
	case goType == "string":
		want = "want a string"
	case goType == "bool":
		want = "want true or false"
	case strings.HasPrefix(goType, "[]"):
		want = "want a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		want = "want a mapping"
	}
	switch tag {
	case "!!seq":
		return want + ", got a list"
	case "!!map":
		return want + ", got a mapping"
	}
	return fmt.Sprintf("%s, got %q", want, value)
}

// parent drops the last segment of a dotted path.
func parent(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}

// suggest returns " (did you mean KEY?)" for the closest known key within
// edit distance 2, else " (known: a, b, c)", else "".
func suggest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	switch {
	case best != "":
		return " (did you mean " + best + "?)"
	case len(known) > 0:
		return " (known: " + strings.Join(known, ", ") + ")"
	}
	return ""
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and adjacent transpositions each cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
