package workload

import (
	"io"
	"slices"
	"strings"

	"handoff/sim"
)

// traceFormat is a trace format a trace section may name, with its
// reader: limit > 0 stops it after that many requests (sessions, for a
// session trace).
type traceFormat struct {
	name string
	open func(r io.Reader, file string, limit int) sim.Source
}

// traceFormats is the registry of trace formats, in the order errors list
// them. A new format is a file in this package (its reader) and a line
// here.
var traceFormats = []traceFormat{
	{FormatAzure, capped(NewAzure)},
	{FormatMooncake, capped(func(r io.Reader, file string) sim.Source { return NewMooncake(r, file, MooncakeBlockTokens) })},
	{FormatBurstGPT, capped(NewBurstGPT)},
	{FormatSessions, func(r io.Reader, file string, limit int) sim.Source { return NewSessionTrace(r, file, limit) }},
}

// capped adapts a reader that replays the whole trace to one that stops
// after limit requests (Limit).
func capped(open func(r io.Reader, file string) sim.Source) func(io.Reader, string, int) sim.Source {
	return func(r io.Reader, file string, limit int) sim.Source { return Limit(open(r, file), limit) }
}

// TraceFormats returns the names of the trace formats, in registry order.
func TraceFormats() []string {
	var out []string
	for _, f := range traceFormats {
		out = append(out, f.name)
	}
	return out
}

// Validate checks t; errors name fields relative to t ("format: ...").
func (t Trace) Validate() error {
	switch {
	case !slices.Contains(TraceFormats(), t.Format):
		return fieldErr("format", "%q is not one of %s", t.Format, strings.Join(TraceFormats(), ", "))
	case t.Path == "":
		return fieldErr("path", "must name a trace file")
	case t.Limit < 0:
		return fieldErr("limit", "must be ≥ 0 (0 = the whole trace), got %d", t.Limit)
	}
	return nil
}

// Open returns the source that replays the trace t names from r, which
// errors name file; t.Limit applies. Panics on a format Validate rejects.
func (t Trace) Open(r io.Reader, file string) sim.Source {
	for _, f := range traceFormats {
		if f.name == t.Format {
			return f.open(r, file, t.Limit)
		}
	}
	panic("workload: unknown trace format " + t.Format)
}
