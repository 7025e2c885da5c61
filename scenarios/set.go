package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"handoff/models/strictyaml"
)

// Set is one --set override: a dotted path into the scenario and a YAML
// value. Pools (and other named list items) are addressed by name:
// "pools.decode.count"; list items may also be addressed by index.
type Set struct {
	Path  string
	Value string
}

// ParseSet splits "path=value". The path may not contain spaces or control
// characters.
func ParseSet(s string) (Set, error) {
	path, value, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	blank := func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
	if !ok || path == "" || strings.IndexFunc(path, blank) >= 0 {
		return Set{}, fmt.Errorf("--set %q: want path=value, e.g. pools.decode.count=8", s)
	}
	return Set{Path: path, Value: value}, nil
}

// String returns "path=value", as written on the command line, with line
// breaks escaped so that it fits in a one-line error.
func (s Set) String() string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s.Path + "=" + s.Value)
}

// apply writes the override into the document tree, creating missing
// mapping keys, after checking that the path names a scenario field. It
// returns the node that now holds the value.
func (s Set) apply(root *yaml.Node) (*yaml.Node, error) {
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(s.Value), &val); err != nil || len(val.Content) == 0 {
		val = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Value}}}
	}
	n, _, err := reach(root, s.Path)
	if err != nil {
		return nil, fmt.Errorf("--set %s: %w", s.Path, err)
	}
	*n = *val.Content[0]
	return n, nil
}

// FieldPath returns the field a --set path names, spelt as errors spell
// it: "pools.prefill.count" and "pools.0.count" are both "pools[0].count"
// when the first pool is named prefill. List items are looked up in the
// loaded document, --set values included; the document does not change.
// A path that names no field is an error, as --set gives it without its
// "--set PATH: " prefix.
func (l *Loaded) FieldPath(path string) (string, error) {
	_, field, err := reach(copyNode(l.root), path)
	return field, err
}

// reach walks a dotted --set path from root, after checking it against the
// schema, creating what is missing on the way: mapping entries, and lists
// that the defaults fill (so their items can be named before defaults are
// applied). It returns the node at the path and the path's field spelling
// ("pools[0].count").
func reach(root *yaml.Node, path string) (*yaml.Node, string, error) {
	t := reflect.TypeFor[Scenario]()
	if err := checkPath(t, path); err != nil {
		return nil, "", err
	}
	n := root
	if n.Kind == yaml.DocumentNode {
		n = n.Content[0]
	}
	field, schema := "", ""
	parts := strings.Split(path, ".")
	for i, part := range parts {
		t = deref(t)
		var at string
		var err error
		if t.Kind() == reflect.Slice {
			n, at, err = item(n, part)
			t = t.Elem()
		} else {
			t = memberType(t, part)
			schema = strictyaml.Join(schema, part)
			n, err = entry(n, part, newValue(t, schema, i == len(parts)-1))
			at = part
		}
		if err != nil {
			return nil, "", err
		}
		field = strictyaml.Join(field, at)
	}
	return n, field, nil
}

// memberType is the type of struct field or map value part of t, which
// checkPath has checked.
func memberType(t reflect.Type, part string) reflect.Type {
	if t.Kind() == reflect.Map {
		return t.Elem()
	}
	f, _ := fieldByTag(t, part)
	return f
}

// newValue returns the node for a field of type t that the document leaves
// out (or null) and a path goes through: a list holds its defaults, if the
// scenario has any for it (defaultList); anything else starts as an empty
// mapping, and the last part's is replaced by the value set.
func newValue(t reflect.Type, schema string, last bool) *yaml.Node {
	if !last && deref(t).Kind() == reflect.Slice {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if def := defaultList(schema); def != nil {
			var doc yaml.Node
			if err := doc.Encode(def); err == nil && doc.Kind == yaml.SequenceNode {
				seq = &doc
			}
		}
		return seq
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
}

// entry returns the value of key in mapping n, adding v under key if it is
// missing; a null n becomes a mapping first, and a null value becomes v.
func entry(n *yaml.Node, key string, v *yaml.Node) (*yaml.Node, error) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "") {
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%q is not a mapping or list in the scenario", key)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			if c := n.Content[i+1]; c.Kind == yaml.ScalarNode && c.Tag == "!!null" {
				*c = *v
			}
			return n.Content[i+1], nil
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v, nil
}

// item finds a list element by its name field or by index, and returns it
// with its field spelling "[i]".
func item(n *yaml.Node, part string) (*yaml.Node, string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, "", fmt.Errorf("%q is not a mapping or list in the scenario", part)
	}
	var names []string
	for k, el := range n.Content {
		for i := 0; i+1 < len(el.Content); i += 2 {
			if el.Content[i].Value == "name" {
				names = append(names, el.Content[i+1].Value)
				if el.Content[i+1].Value == part {
					return el, "[" + strconv.Itoa(k) + "]", nil
				}
			}
		}
	}
	if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(n.Content) {
		return n.Content[i], "[" + strconv.Itoa(i) + "]", nil
	}
	return nil, "", fmt.Errorf("no list item named %q (have %s)", part, strings.Join(names, ", "))
}

// copyNode returns a deep copy of a document tree; aliases in the copy
// still point at the original's anchors, which reach does not change.
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = copyNode(ch)
	}
	return &c
}

// checkPath reports whether a dotted path names a field of t, following
// yaml tags; list parts may be any name or index, map parts any key.
func checkPath(t reflect.Type, path string) error {
	for _, part := range strings.Split(path, ".") {
		t = deref(t)
		switch t.Kind() {
		case reflect.Slice, reflect.Map:
			t = t.Elem() // any item name or index, any key
			continue
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return fmt.Errorf("no field %q here (known: %s)", part, strings.Join(tags(t), ", "))
			}
			t = f
		default:
			return fmt.Errorf("%q: %s has no fields", part, t)
		}
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldByTag returns the type of t's field whose yaml key is name,
// looking inside inlined structs (`yaml:",inline"`) as the decoder does.
func fieldByTag(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		key, inline := yamlKey(f)
		switch {
		case inline && deref(f.Type).Kind() == reflect.Struct:
			if ft, ok := fieldByTag(deref(f.Type), name); ok {
				return ft, true
			}
		case !inline && key == name:
			return f.Type, true
		}
	}
	return nil, false
}

// tags returns t's yaml keys in order, an inlined struct's in its place.
func tags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		switch key, inline := yamlKey(f); {
		case inline && deref(f.Type).Kind() == reflect.Struct:
			out = append(out, tags(deref(f.Type))...)
		case !inline && key != "" && key != "-":
			out = append(out, key)
		}
	}
	return out
}

// yamlKey returns a field's yaml key (its tag's name) and whether the tag
// inlines it.
func yamlKey(f reflect.StructField) (key string, inline bool) {
	key, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	for _, o := range strings.Split(opts, ",") {
		inline = inline || o == "inline"
	}
	return key, inline
}
