package experiment

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Replay names one simulation well enough to run it again on its own:
// the scenario file, the seed and the --set overrides, in order.
type Replay struct {
	File string
	Seed uint64
	Sets []string // the --set flags, as typed
}

// String names the run in a message: "s.yaml (seed 7, --set a=b)".
func (r Replay) String() string {
	parts := []string{"seed " + strconv.FormatUint(r.Seed, 10)}
	for _, s := range r.Sets {
		parts = append(parts, "--set "+ShellQuote(s))
	}
	return r.File + " (" + strings.Join(parts, ", ") + ")"
}

// Command returns the shell command that replays the run.
func (r Replay) Command() string {
	args := []string{"handoff", "run", ShellQuote(r.File), "--seed", strconv.FormatUint(r.Seed, 10)}
	for _, s := range r.Sets {
		args = append(args, "--set", ShellQuote(s))
	}
	return strings.Join(args, " ")
}

// shellSafe matches the arguments a POSIX shell takes as they are.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// ShellQuote returns s as one shell word: as it is when that is safe,
// else in single quotes.
func ShellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// InternalError is a panic during a run, recovered: a bug of the
// simulator, not of the input.
type InternalError struct {
	Run   Replay
	Value any
	At    string // where it panicked: "models/engine.(*Instance).Release (release.go:88)"; "" if unknown
}

// Error renders the panic in one line with how to replay the run alone.
func (e *InternalError) Error() string {
	at := ""
	if e.At != "" {
		at = " at " + e.At
	}
	return fmt.Sprintf("%s: internal error: %v%s — a simulator bug; replay with: %s", e.Run, e.Value, at, e.Run.Command())
}

// RecoverRun, deferred by each command where it calls into the simulator,
// turns a panic into an InternalError for run r (read when the panic is
// recovered, so r may be completed after the defer) in *err; the process,
// and in a sweep the other points, go on. It must be deferred directly.
func RecoverRun(err *error, r *Replay) {
	v := recover()
	if v == nil {
		return
	}
	*err = &InternalError{Run: *r, Value: v, At: PanicSite()}
}

// PanicSite returns the function and line that panicked. It must be
// called by the deferred function that recovered: the frames above that
// function are the runtime's panic machinery, then the panicking one.
func PanicSite() string {
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

// lineBreaks matches a line break and the blanks around it.
var lineBreaks = regexp.MustCompile(`\s*\n\s*`)

// OneLine joins a multi-line message into one line, so that every error
// and warning is one line on the writer it goes to.
func OneLine(msg string) string {
	return lineBreaks.ReplaceAllString(strings.TrimSpace(msg), " ")
}
