package main

import "errors"

// Exit statuses, the same for every command (docs/COMMANDS.md, "Exit status"). A script
// driving handoff can tell a run that produced nothing trustworthy (1) from
// one whose outputs are all written but have holes it must look at (2).
const (
	// exitOK: the command finished, and every run in it served every
	// request (completed, or rejected by the admission policy under test).
	exitOK = 0
	// exitError: the command stopped, or has no result to trust: bad input
	// or flags, a workload with no requests, an output that cannot be
	// written, an internal error. What it wrote before stopping is kept.
	exitError = 1
	// exitIncomplete: the command finished and wrote all its outputs, but
	// some requests were dropped (no instance could ever hold them), or
	// some points of a sweep failed. The message names the first.
	exitIncomplete = 2
)

// incompleteError is the error of a command that finished and wrote its
// outputs, but whose results have holes: it exits with exitIncomplete.
type incompleteError struct{ err error }

// Error is the underlying error's message.
func (e *incompleteError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e *incompleteError) Unwrap() error { return e.err }

// incomplete marks err (nil stays nil) as the error of a finished command
// with holes in its results.
func incomplete(err error) error {
	if err == nil {
		return nil
	}
	return &incompleteError{err}
}

// exitCode returns the exit status for a command's error.
func exitCode(err error) int {
	var inc *incompleteError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &inc):
		return exitIncomplete
	}
	return exitError
}
