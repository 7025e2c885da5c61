package autoscale

import (
	"errors"
	"fmt"
)

// fieldErr builds a validation error naming a field relative to the
// section, as scenarios/workload's Validate methods do.
func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

// prefixed puts "prefix." before each of err's joined errors (nil stays
// nil).
func prefixed(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range leaves(err) {
		out = append(out, fmt.Errorf("%s.%w", prefix, e))
	}
	return errors.Join(out...)
}

// leaves returns the errors errors.Join combined into err, at any depth
// (a prefixed error wraps exactly one).
func leaves(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}
