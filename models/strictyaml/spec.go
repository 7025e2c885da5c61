// Package strictyaml is the strict YAML decoding that every loader shares (scenario
// files, the hardware catalog, the model catalog): unknown keys are errors
// with a "did you mean" suggestion, and every error names the file, the line
// and the field by its dotted path, such as "pools[1].engine.block_size".
//
// Loaders call Decode, then validate the decoded values and report problems
// with Errorf (or Locate, for errors built without a position by Fieldf),
// which looks the field's line up in the node tree Decode returned.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// FieldError is a validation error located in a YAML file. Error() reads
// "FILE:LINE: field FIELD: MSG"; parts that are unknown (no file, line 0, no
// field) are left out.
type FieldError struct {
	File  string // file name as given to Decode
	Line  int    // 1-based line; 0 = unknown
	Field string // dotted path such as "pools[1].engine.block_size"
	Msg   string
}

// Error formats the error as "FILE:LINE: field FIELD: MSG", on one line:
// line breaks (a key or value can hold them) are written as \n and \r.
func (e *FieldError) Error() string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(e.format())
}

func (e *FieldError) format() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString("field " + e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Decode strictly decodes one YAML document in data into v, a pointer, and
// returns the parsed node tree for later line look-ups with Find and Errorf.
// Unknown keys, duplicate keys, values of the wrong type (among them a
// decimal, or an integer out of range, in an integer field), an empty
// document and more than one document are errors; only the first error (by line) is
// returned, as a *FieldError naming file, line and field. Cost: two parses of
// data.
func Decode(data []byte, file string, v any) (*yaml.Node, error) {
	root, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var first *FieldError
	if err := dec.Decode(v); err != nil {
		if !errors.As(convert(root, file, v, err), &first) {
			return root, err
		}
	}
	if ie := checkInts(root, file, v); ie != nil && (first == nil || ie.Line <= first.Line) {
		first = ie
	}
	if first != nil {
		return root, first
	}
	return root, nil
}

// parseTree parses data into a node tree, rejecting syntax errors, empty
// documents and extra documents.
func parseTree(data []byte, file string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	err := dec.Decode(&root)
	if errors.Is(err, io.EOF) || (err == nil && isEmpty(&root)) {
		return nil, &FieldError{File: file, Msg: "empty document"}
	}
	if err != nil {
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(file, err)
		}
		return nil, &FieldError{File: file, Line: extra.Line, Msg: "only one YAML document is allowed"}
	}
	return &root, nil
}

func isEmpty(root *yaml.Node) bool {
	n := body(root)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// body returns the top-level value of a document node (or n itself).
func body(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return n.Content[0]
	}
	return n
}

// syntaxError turns "yaml: line 3: did not find expected key" into a
// FieldError at line 3.
func syntaxError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, rest := splitLine(msg)
	return &FieldError{File: file, Line: line, Msg: "invalid YAML: " + rest}
}

// splitLine splits "line N: rest" into N and rest; 0 and msg when absent.
func splitLine(msg string) (int, string) {
	after, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, rest, ok := strings.Cut(after, ": ")
	line, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, msg
	}
	return line, rest
}

// Fieldf builds a FieldError for a field but no position yet: validation code
// that has no node tree (a Resolve method) returns it, and the loader that
// has the tree places it with Locate.
func Fieldf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Errorf builds a FieldError for the dotted path, with the line of the
// deepest node on that path that exists in root (root may be nil: line 0).
func Errorf(root *yaml.Node, file, path, format string, args ...any) error {
	_, line := walk(root, path)
	return &FieldError{File: file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)}
}

// Locate places err in file: a FieldError without a file (from Fieldf) gets
// its field prefixed by prefix ("accelerators[2]" + "memory") and the line of
// that path; a FieldError that already has a file is returned as is; any
// other error is reported at prefix.
func Locate(root *yaml.Node, file, prefix string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		if fe.File != "" {
			return err
		}
		return Errorf(root, file, Join(prefix, fe.Field), "%s", fe.Msg)
	}
	return Errorf(root, file, prefix, "%v", err)
}

// Join joins two dotted paths: Join("pools[1]", "count") = "pools[1].count";
// an index suffix joins without a dot: Join("pools", "[1]") = "pools[1]".
func Join(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}
