package workload

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// csvError converts an error of encoding/csv's reader into one naming the
// file once: a *ParseError from the input's caps (lineCapped) as it is, a
// csv.ParseError as a *ParseError with its line and column, and an I/O
// error with the file before it.
func (s *sequencer) csvError(err error) error {
	var own *ParseError
	if errors.As(err, &own) {
		return own
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return s.errorf(pe.Line, "", "column %d: %v", pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", s.file, err)
}

// jsonError converts an error of encoding/json on line into a
// *ParseError: a value of the wrong type names its key and what belongs
// there, in JSON's words rather than Go's.
func (s *sequencer) jsonError(line int, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return s.errorf(line, te.Field, "cannot use a JSON %s as %s", te.Value, jsonKind(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return s.errorf(line, "", "column %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	return s.errorf(line, "", "%s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind says what JSON value a Go type t takes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
