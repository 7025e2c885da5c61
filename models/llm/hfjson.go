package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// ConfigError reports a Hugging Face config.json that handoff cannot read:
// the file, the JSON path of the offending key ("num_hidden_layers",
// "quantization_config.quant_method", "layer_types[3]") and what is wrong.
type ConfigError struct {
	File string
	Path string // JSON path; empty when the file as a whole is wrong
	Msg  string
}

// Error formats the error as "FILE: PATH: MSG" on one line.
func (e *ConfigError) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Path + ": " + e.Msg
}

// maxQuotedJSON bounds how much of a bad value an error echoes.
const maxQuotedJSON = 40

// maxConfigBytes bounds a config.json; real ones are a few kB.
const maxConfigBytes = 1 << 20

// cfgReader reads keys of a config.json with a sticky error: once a read
// fails, every later read returns the zero value and the first error
// stands, so a reader of many keys checks once at the end.
type cfgReader struct {
	file string
	err  error
}

// cfgObject is one JSON object of the config and its path in it.
type cfgObject struct {
	path string
	keys map[string]json.RawMessage
}

// failf records the first error, at path.
func (r *cfgReader) failf(path, format string, args ...any) {
	if r.err == nil {
		r.err = &ConfigError{File: r.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

// parseObject decodes data as a JSON object.
func (r *cfgReader) parseObject(data []byte) cfgObject {
	o := cfgObject{}
	switch {
	case len(data) > maxConfigBytes:
		r.failf("", "larger than %d KiB: not a config.json", maxConfigBytes>>10)
	case json.Unmarshal(data, &o.keys) != nil || o.keys == nil:
		r.failf("", "not a JSON object (a Hugging Face config.json is one)")
	}
	return o
}

// at is the JSON path of key in o.
func (o cfgObject) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// has reports whether o holds key with a value other than null.
func (o cfgObject) has(key string) bool {
	v, ok := o.keys[key]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// intReq reads a required integer in [0, maxDim].
func (r *cfgReader) intReq(o cfgObject, key string) int {
	if !o.has(key) {
		r.failf(o.at(key), "missing (required for this architecture)")
		return 0
	}
	return r.intAt(o.at(key), o.keys[key])
}

// intOr reads an optional integer in [0, maxDim]: def when absent or null.
func (r *cfgReader) intOr(o cfgObject, key string, def int) int {
	if !o.has(key) {
		return def
	}
	return r.intAt(o.at(key), o.keys[key])
}

// intAt decodes an integer in [0, maxDim]; an integral number written as
// a float (4096.0) is taken.
func (r *cfgReader) intAt(path string, v json.RawMessage) int {
	if r.err != nil {
		return 0
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		r.failf(path, "want an integer, got %s", jsonKindOf(v))
		return 0
	}
	if f != math.Trunc(f) || f < 0 || f > maxDim {
		r.failf(path, "want an integer in [0, %d], got %s", maxDim, strconv.FormatFloat(f, 'g', -1, 64))
		return 0
	}
	return int(f)
}

// boolOr reads an optional boolean: def when absent or null.
func (r *cfgReader) boolOr(o cfgObject, key string, def bool) bool {
	if r.err != nil || !o.has(key) {
		return def
	}
	var b bool
	if err := json.Unmarshal(o.keys[key], &b); err != nil {
		r.failf(o.at(key), "want true or false, got %s", jsonKindOf(o.keys[key]))
	}
	return b
}

// str reads an optional string: "" when absent or null.
func (r *cfgReader) str(o cfgObject, key string) string {
	if r.err != nil || !o.has(key) {
		return ""
	}
	var s string
	if err := json.Unmarshal(o.keys[key], &s); err != nil {
		r.failf(o.at(key), "want a string, got %s", jsonKindOf(o.keys[key]))
	}
	return s
}

// strings reads an optional list of strings: nil when absent or null.
func (r *cfgReader) strings(o cfgObject, key string) []string {
	if r.err != nil || !o.has(key) {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(o.keys[key], &raw); err != nil {
		r.failf(o.at(key), "want a list of strings, got %s", jsonKindOf(o.keys[key]))
		return nil
	}
	out := make([]string, len(raw))
	for i, v := range raw {
		if err := json.Unmarshal(v, &out[i]); err != nil {
			r.failf(fmt.Sprintf("%s[%d]", o.at(key), i), "want a string, got %s", jsonKindOf(v))
			return nil
		}
	}
	return out
}

// ints reads an optional list of integers in [0, maxDim]: nil when absent
// or null.
func (r *cfgReader) ints(o cfgObject, key string) []int {
	if r.err != nil || !o.has(key) {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(o.keys[key], &raw); err != nil {
		r.failf(o.at(key), "want a list of integers, got %s", jsonKindOf(o.keys[key]))
		return nil
	}
	out := make([]int, len(raw))
	for i, v := range raw {
		out[i] = r.intAt(fmt.Sprintf("%s[%d]", o.at(key), i), v)
	}
	return out
}

// object reads an optional nested object: ok false when absent or null.
func (r *cfgReader) object(o cfgObject, key string) (cfgObject, bool) {
	if r.err != nil || !o.has(key) {
		return cfgObject{}, false
	}
	sub := cfgObject{path: o.at(key)}
	if err := json.Unmarshal(o.keys[key], &sub.keys); err != nil || sub.keys == nil {
		r.failf(o.at(key), "want an object, got %s", jsonKindOf(o.keys[key]))
		return cfgObject{}, false
	}
	return sub, true
}

// jsonKindOf names the kind of a JSON value for an error.
func jsonKindOf(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if len(t) > maxQuotedJSON {
		t = append(t[:maxQuotedJSON:maxQuotedJSON], "…"...)
	}
	return "the number " + string(t)
}
