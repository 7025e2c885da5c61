package workload

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"handoff/sim"
)

// traceFormat is a trace format a trace section may name: the trace
// fields besides format, path and limit it takes (options), what it
// requires of them (check; nil: nothing), and its reader: limit > 0 stops
// it after that many requests (sessions, for a session trace); rng draws
// what the format leaves to the scenario (ShareGPT's arrivals).
type traceFormat struct {
	name    string
	options []string
	check   func(t Trace) error
	open    func(r io.Reader, file string, t Trace, rng *rand.Rand) sim.Source
}

// traceFormats is the registry of trace formats, in the order errors list
// them. A new format is a file in this package (its reader) and a line
// here.
var traceFormats = []traceFormat{
	{FormatAzure, nil, nil, capped(NewAzure)},
	{FormatMooncake, nil, nil, capped(func(r io.Reader, file string) sim.Source { return NewMooncake(r, file, MooncakeBlockTokens) })},
	{FormatBurstGPT, nil, nil, capped(NewBurstGPT)},
	{FormatSessions, nil, nil, func(r io.Reader, file string, t Trace, _ *rand.Rand) sim.Source {
		return NewSessionTrace(r, file, t.Limit)
	}},
	{FormatShareGPT, []string{"arrival"}, checkShareGPT, func(r io.Reader, file string, t Trace, rng *rand.Rand) sim.Source {
		return Limit(NewShareGPT(r, file, *t.Arrival, rng), t.Limit)
	}},
	{FormatCSV, mappedOptions, checkMapped, func(r io.Reader, file string, t Trace, _ *rand.Rand) sim.Source {
		return Limit(NewMappedCSV(r, file, t), t.Limit)
	}},
	{FormatJSONL, mappedOptions, checkMapped, func(r io.Reader, file string, t Trace, _ *rand.Rand) sim.Source {
		return Limit(NewMappedJSONL(r, file, t), t.Limit)
	}},
	{FormatOTLP, nil, nil, capped(NewOTLP)},
}

// capped adapts a reader that replays the whole trace to one that stops
// after the trace's limit (Limit).
func capped(open func(r io.Reader, file string) sim.Source) func(io.Reader, string, Trace, *rand.Rand) sim.Source {
	return func(r io.Reader, file string, t Trace, _ *rand.Rand) sim.Source { return Limit(open(r, file), t.Limit) }
}

// TraceFormats returns the names of the trace formats, in registry order.
func TraceFormats() []string {
	var out []string
	for _, f := range traceFormats {
		out = append(out, f.name)
	}
	return out
}

// format returns the registry's entry named name.
func format(name string) (traceFormat, bool) {
	for _, f := range traceFormats {
		if f.name == name {
			return f, true
		}
	}
	return traceFormat{}, false
}

// Validate checks t; errors name fields relative to t ("format: ...").
func (t Trace) Validate() error {
	f, ok := format(t.Format)
	switch {
	case !ok:
		return fieldErr("format", "%q is not one of %s", t.Format, strings.Join(TraceFormats(), ", "))
	case t.Path == "":
		return fieldErr("path", "must name a trace file")
	case t.Limit < 0:
		return fieldErr("limit", "must be ≥ 0 (0 = the whole trace), got %d", t.Limit)
	}
	for _, o := range t.options() {
		if !slices.Contains(f.options, o) {
			return fieldErr(o, "not for format %s (%s)", t.Format, takes(f.options))
		}
	}
	if f.check == nil {
		return nil
	}
	return f.check(t)
}

// options returns the format-specific fields t sets.
func (t Trace) options() []string {
	var out []string
	for _, o := range []struct {
		name string
		set  bool
	}{{"arrival", t.Arrival != nil}, {"columns", t.Columns != nil}, {"timestamp_unit", t.TimestampUnit != ""},
		{"block_tokens", t.BlockTokens != 0}} {
		if o.set {
			out = append(out, o.name)
		}
	}
	return out
}

// takes says which format-specific fields a format takes.
func takes(options []string) string {
	if len(options) == 0 {
		return "it takes format, path and limit only"
	}
	return fmt.Sprintf("it takes %s besides format, path and limit", strings.Join(options, ", "))
}

// Open returns the source that replays the trace t names from r, which
// errors name file; t.Limit applies; rng draws what the format leaves to
// the scenario (a ShareGPT file's arrivals). Panics on a format Validate
// rejects.
func (t Trace) Open(r io.Reader, file string, rng *rand.Rand) sim.Source {
	f, ok := format(t.Format)
	if !ok {
		panic("workload: unknown trace format " + t.Format)
	}
	return f.open(r, file, t, rng)
}

// checkShareGPT requires a ShareGPT trace's arrival process.
func checkShareGPT(t Trace) error {
	if t.Arrival == nil {
		return fieldErr("arrival", "required: a ShareGPT file has no timestamps (e.g. {process: poisson, rate: 10/s})")
	}
	return prefixed("arrival", t.Arrival.Validate())
}
