package scenarios

import (
	"reflect"
	"strings"

	"handoff/models/strictyaml"
)

// fillFrom fills the fields of *dst, a component's section at path at,
// that the file leaves out (absent or null) from the same fields of *def,
// its defaults: the rule fill applies to one field, applied to every
// YAML-tagged field of the section (",inline" fields' own). A field
// written out, even as 0 or "", is kept.
func fillFrom[T any](l *Loaded, at string, dst, def *T) {
	fillStruct(l, at, reflect.ValueOf(dst).Elem(), reflect.ValueOf(def).Elem())
}

func fillStruct(l *Loaded, at string, dst, def reflect.Value) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case strings.Contains(","+opts+",", ",inline,"):
			fillStruct(l, at, dst.Field(i), def.Field(i))
		case dst.Field(i).IsZero():
			if n := strictyaml.Find(l.root, at+"."+name); n == nil || n.Tag == "!!null" {
				dst.Field(i).Set(def.Field(i))
			}
		}
	}
}
