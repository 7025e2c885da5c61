package strictyaml

import (
	"reflect"
	"sort"
	"strings"
)

// knownKeys returns the sorted YAML keys of the struct that the dotted path
// reaches from type t, or nil when the path does not lead to a struct.
func knownKeys(t reflect.Type, path string) []string {
	segs, ok := parsePath(path)
	if !ok || t == nil {
		return nil
	}
	for _, s := range segs {
		t = deref(t)
		switch {
		case s.isIdx && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			t = t.Elem()
		case !s.isIdx && t.Kind() == reflect.Map:
			t = t.Elem()
		case !s.isIdx && t.Kind() == reflect.Struct:
			f, ok := fieldByKey(t, s.key)
			if !ok {
				return nil
			}
			t = f
		default:
			return nil
		}
	}
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	eachKey(t, func(k string, _ reflect.Type) bool { keys = append(keys, k); return false })
	sort.Strings(keys)
	return keys
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldByKey returns the type of the struct field that YAML key names.
func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	var found reflect.Type
	eachKey(t, func(k string, ft reflect.Type) bool {
		if k == key {
			found = ft
			return true
		}
		return false
	})
	return found, found != nil
}

// eachKey calls fn with the YAML key and type of each field of struct t, as
// yaml.v3 names them (tag name, else the lower-cased field name), descending
// into ",inline" fields. It stops when fn returns true and reports whether
// it did.
func eachKey(t reflect.Type, fn func(key string, ft reflect.Type) bool) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") {
			if ft := deref(f.Type); ft.Kind() == reflect.Struct && eachKey(ft, fn) {
				return true
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if fn(name, f.Type) {
			return true
		}
	}
	return false
}
