package strictyaml

import (
	"encoding"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// yaml.v3 stores 2.5 in an int field as 2, 1e30 as whatever the float
// conversion gives, and an integer above the field's range as a float
// converted the same way: the value the run uses is not the one written.
// checkInts walks the document beside the Go type it decodes into and
// refuses, for every integer field whatever its struct, any scalar that is
// not an integer literal within the field's range.

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType        = reflect.TypeFor[time.Duration]()
)

// intChecker is one walk: the file for errors, the first error found (by
// line) and the (node, type) pairs already walked, so that aliases are
// walked once per type and a pathological document stays linear.
type intChecker struct {
	file  string
	first *FieldError
	seen  map[intVisit]bool
}

type intVisit struct {
	n *yaml.Node
	t reflect.Type
}

// checkInts returns the first (by line) scalar of root bound for an integer
// field of v's type that is not an integer in the field's range, or nil.
func checkInts(root *yaml.Node, file string, v any) *FieldError {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	c := &intChecker{file: file, seen: map[intVisit]bool{}}
	c.walk(body(root), t.Elem(), "", 0)
	return c.first
}

// walk checks n as the YAML form of a value of type t at path.
func (c *intChecker) walk(n *yaml.Node, t reflect.Type, path string, depth int) {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	t = deref(t)
	if n == nil || depth > maxDepth || decodesItself(t) || c.seen[intVisit{n, t}] {
		return
	}
	c.seen[intVisit{n, t}] = true
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		c.walkMapping(n, t, path, depth)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode || t.Elem().Kind() == reflect.Uint8 {
			return // a type error for yaml.v3, or !!binary
		}
		for i, el := range n.Content {
			c.walk(el, t.Elem(), Join(path, "["+strconv.Itoa(i)+"]"), depth+1)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && t != durationType {
			c.checkScalar(n, t, path)
		}
	}
}

// walkMapping walks the values of a mapping decoded into a struct (by YAML
// key) or a map (every value), following merge keys.
func (c *intChecker) walkMapping(n *yaml.Node, t reflect.Type, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.ShortTag() == "!!merge":
			c.walkMerge(v, t, path, depth)
		case t.Kind() == reflect.Map:
			c.walk(v, t.Elem(), Join(path, k.Value), depth+1)
		default:
			if ft, ok := fieldByKey(t, k.Value); ok {
				c.walk(v, ft, Join(path, k.Value), depth+1)
			}
		}
	}
}

// walkMerge walks the mapping (or list of mappings) a "<<" key merges in.
func (c *intChecker) walkMerge(v *yaml.Node, t reflect.Type, path string, depth int) {
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			c.walk(m, t, path, depth+1)
		}
		return
	}
	c.walk(v, t, path, depth+1)
}

// decodesItself reports whether yaml.v3 hands values of t to t's own
// decoding method, whose rules then apply.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType)
}

// checkScalar records an error unless n, a scalar for an integer field of
// type t, is null, not a number (yaml.v3 reports that as a type error), or
// an integer literal in t's range.
func (c *intChecker) checkScalar(n *yaml.Node, t reflect.Type, path string) {
	tag := n.ShortTag()
	if tag != "!!int" && tag != "!!float" {
		return
	}
	var msg string
	plain := strings.ReplaceAll(n.Value, "_", "")      // as yaml.v3 reads 1_000
	if v, ok := new(big.Int).SetString(plain, 0); ok { // and 0x1f, 0o17, 0b101
		lo, hi := intRange(t)
		if v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0 {
			return
		}
		msg = fmt.Sprintf("want an integer in [%s, %s], got %s", lo, hi, n.Value)
	} else {
		msg = fmt.Sprintf("want an integer, got %q", n.Value)
	}
	if c.first == nil || n.Line < c.first.Line {
		c.first = &FieldError{File: c.file, Line: n.Line, Field: path, Msg: msg}
	}
}

// intRange returns the least and greatest values of integer type t.
func intRange(t reflect.Type) (lo, hi *big.Int) {
	bits := uint(t.Bits())
	one := big.NewInt(1)
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
	}
	hi = new(big.Int).Sub(new(big.Int).Lsh(one, bits-1), one)
	return new(big.Int).Neg(new(big.Int).Add(hi, one)), hi
}
