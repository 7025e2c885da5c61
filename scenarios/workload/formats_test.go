package workload

import (
	"io"
	"slices"
	"strings"
	"testing"

	"handoff/sim"
)

// TestTraceFormatsRegistered: every format constant is registered, in
// the order errors list them, and the error lists the registry.
func TestTraceFormatsRegistered(t *testing.T) {
	want := []string{FormatAzure, FormatMooncake, FormatBurstGPT, FormatSessions, FormatShareGPT, FormatCSV, FormatJSONL, FormatOTLP}
	if got := TraceFormats(); !slices.Equal(got, want) {
		t.Fatalf("formats %v, want %v", got, want)
	}
	for _, f := range want {
		if err := validTrace(f).Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	err := Trace{Format: "nope", Path: "t"}.Validate()
	if err == nil || err.Error() != `format: "nope" is not one of azure, mooncake, burstgpt, sessions, sharegpt, csv, jsonl, otlp` {
		t.Fatalf("error %v", err)
	}
}

// validTrace is a trace of format f with what the format requires.
func validTrace(f string) Trace {
	t := Trace{Format: f, Path: "t"}
	switch f {
	case FormatShareGPT:
		t.Arrival = &Arrival{Process: ProcessPoisson, Rate: 10}
	case FormatCSV, FormatJSONL:
		t.Columns = &Columns{Timestamp: "ts", InputTokens: "in", OutputTokens: "out"}
		t.TimestampUnit = "ms"
	}
	return t
}

// TestRegisterToyTraceFormat registers a format with one line: Validate
// accepts it and Open reads with it, the limit applied.
func TestRegisterToyTraceFormat(t *testing.T) {
	saved := traceFormats
	t.Cleanup(func() { traceFormats = saved })
	traceFormats = append(slices.Clip(traceFormats), traceFormat{"toy", nil, nil, capped(func(r io.Reader, file string) sim.Source {
		return NewAzure(r, file)
	})})
	tr := Trace{Format: "toy", Path: "t.csv", Limit: 1}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	src := tr.Open(strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n"), "t.csv", nil)
	var r sim.Request
	n := 0
	for {
		ok, err := src.Next(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		n++
	}
	if n != 1 || r.PromptTokens != 374 {
		t.Fatalf("read %d requests, last %+v; want 1 of 374 tokens", n, r)
	}
}

// Dists and Processes are the names validation accepts: each passes it,
// and the table of fields each distribution reads covers exactly them.
func TestKnownNames(t *testing.T) {
	for _, d := range Dists() {
		if _, ok := lengthFields[d]; !ok {
			t.Errorf("distribution %s reads no fields", d)
		}
	}
	if len(lengthFields) != len(Dists()) {
		t.Errorf("lengthFields has %d distributions, Dists %d", len(lengthFields), len(Dists()))
	}
	for _, p := range Processes() {
		a := Arrival{Process: p, Rate: 1}
		if p == ProcessGamma {
			a.CV = 1
		}
		if err := a.Validate(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
