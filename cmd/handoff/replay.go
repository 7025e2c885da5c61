package main

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// replay names one simulation well enough to run it again on its own:
// the scenario file, the seed and the --set overrides, in order.
type replay struct {
	file string
	seed uint64
	sets []string
}

// String names the run in a message: "s.yaml (seed 7, --set a=b)".
func (r replay) String() string {
	parts := []string{"seed " + strconv.FormatUint(r.seed, 10)}
	for _, s := range r.sets {
		parts = append(parts, "--set "+shellQuote(s))
	}
	return r.file + " (" + strings.Join(parts, ", ") + ")"
}

// command returns the shell command that replays the run.
func (r replay) command() string {
	args := []string{"handoff", "run", shellQuote(r.file), "--seed", strconv.FormatUint(r.seed, 10)}
	for _, s := range r.sets {
		args = append(args, "--set", shellQuote(s))
	}
	return strings.Join(args, " ")
}

// shellSafe matches the arguments a POSIX shell takes as they are.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote returns s as one shell word: as it is when that is safe,
// else in single quotes.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// internalError is a panic during a run, recovered: a bug of the
// simulator, not of the input.
type internalError struct {
	run   replay
	value any
	at    string // where it panicked: "models/engine.(*Instance).Release (release.go:88)"; "" if unknown
}

// Error renders the panic in one line with how to replay the run alone.
func (e *internalError) Error() string {
	at := ""
	if e.at != "" {
		at = " at " + e.at
	}
	return fmt.Sprintf("%s: internal error: %v%s — a simulator bug; replay with: %s", e.run, e.value, at, e.run.command())
}

// recoverRun, deferred by each command where it calls into the simulator,
// turns a panic into an internalError for run r (read when the panic is
// recovered, so r may be completed after the defer) in *err; the process,
// and in a sweep the other points, go on. It must be deferred directly.
func recoverRun(err *error, r *replay) {
	v := recover()
	if v == nil {
		return
	}
	*err = &internalError{run: *r, value: v, at: panicSite()}
}

// panicSite returns the function and line that panicked. It must be
// called by the deferred function that recovered: the frames above that
// function are the runtime's panic machinery, then the panicking one.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)]) // from the deferred function's caller
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			file := f.File[strings.LastIndexByte(f.File, '/')+1:]
			return fmt.Sprintf("%s (%s:%d)", strings.TrimPrefix(f.Function, "handoff/"), file, f.Line)
		}
		if !more {
			return ""
		}
	}
}
