package docspec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Marker is a doc: marker, an HTML comment that tells the checks about the
// item after it: <!-- doc:KIND name="value" ... --> or, for a table's
// spec, <!-- doc:table followed by YAML lines -->.
type Marker struct {
	Kind  string              // exit, external, known-failure, with, output, table
	Attrs map[string][]string // name="value" pairs; a name may repeat
	Body  string              // doc:table: the YAML after the kind
	Line  int
}

// markerKinds lists each kind with the attributes it takes; those in
// required must be given.
var markerKinds = map[string]struct{ allowed, required []string }{
	"exit":          {[]string{"status"}, []string{"status"}},
	"external":      {[]string{"reason"}, []string{"reason"}},
	"known-failure": {[]string{"reason"}, []string{"reason"}},
	"with":          {[]string{"cmd", "each"}, []string{"cmd"}},
	"output":        {[]string{"cmd", "block", "stream", "mask", "status"}, nil},
	"table":         {nil, nil},
}

var (
	markerHead = regexp.MustCompile(`^\s*doc:([a-z-]+)`)
	attrRe     = regexp.MustCompile(`^\s*([a-z]+)="([^"]*)"`)
)

// Attr returns the value of an attribute given once, or "".
func (m Marker) Attr(name string) string {
	if v := m.Attrs[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// marker records the comment starting at line; comments that do not start
// with "doc:" are left alone.
func (p *parser) marker(line int, comment string) error {
	head := markerHead.FindStringSubmatch(comment)
	if head == nil {
		return nil
	}
	m, err := parseMarker(head[1], comment[len(head[0]):])
	if err != nil {
		return fmt.Errorf("%s:%d: marker doc:%s: %v", p.doc.Name, line, head[1], err)
	}
	m.Line = line
	p.pending = append(p.pending, m)
	return nil
}

// parseMarker reads a marker's attributes (or a table's YAML body).
func parseMarker(kind, rest string) (Marker, error) {
	spec, ok := markerKinds[kind]
	if !ok {
		return Marker{}, fmt.Errorf("unknown kind (want exit, external, known-failure, with, output or table)")
	}
	m := Marker{Kind: kind, Attrs: map[string][]string{}}
	if kind == "table" {
		m.Body = rest
		return m, nil
	}
	for strings.TrimSpace(rest) != "" {
		a := attrRe.FindStringSubmatch(rest)
		if a == nil {
			return m, fmt.Errorf("want name=\"value\" pairs, got %q", strings.TrimSpace(rest))
		}
		if !slices.Contains(spec.allowed, a[1]) {
			return m, fmt.Errorf("unknown attribute %q (want %s)", a[1], strings.Join(spec.allowed, ", "))
		}
		m.Attrs[a[1]] = append(m.Attrs[a[1]], a[2])
		rest = rest[len(a[0]):]
	}
	for _, r := range spec.required {
		if m.Attr(r) == "" {
			return m, fmt.Errorf("needs %s=\"...\"", r)
		}
	}
	return m, nil
}
