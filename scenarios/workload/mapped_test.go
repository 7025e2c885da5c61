package workload

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"handoff/models/kv"
	"handoff/sim"
)

// mappedSpec maps the test files' columns.
func mappedSpec(unit string, extra func(c *Columns)) Trace {
	c := &Columns{Timestamp: "ts", InputTokens: "in", OutputTokens: "out"}
	if extra != nil {
		extra(c)
	}
	return Trace{Format: FormatCSV, Path: "m.csv", Columns: c, TimestampUnit: unit}
}

// TestMappedCSVAndJSONL reads the same rows from a CSV file (columns in
// any order, others ignored) and a JSONL one (numbers or strings): each
// unit, and the same requests.
func TestMappedCSVAndJSONL(t *testing.T) {
	csv := "model,out,ts,in\nm,5,1000.5,20\nm,0,1002,7\n"
	jsonl := `{"ts": 1000.5, "in": 20, "out": 5, "model": "m"}` + "\n\n" + `{"ts": "1002", "in": "7", "out": 0}` + "\n"
	for _, tc := range []struct {
		unit string
		gap  int64 // ns between the rows
	}{{"s", 1.5e9}, {"ms", 1.5e6}, {"us", 1500}, {"ns", 1}} { // 1000.5 ns rounds to 1001
		spec := mappedSpec(tc.unit, nil)
		for name, src := range map[string]sim.Source{
			"csv":   NewMappedCSV(strings.NewReader(csv), "m.csv", spec),
			"jsonl": NewMappedJSONL(strings.NewReader(jsonl), "m.jsonl", spec),
		} {
			reqs, err := drain(src, 10)
			if err != nil {
				t.Fatalf("%s %s: %v", name, tc.unit, err)
			}
			checkInvariants(t, reqs)
			if len(reqs) != 2 || reqs[1].ArrivalNs != tc.gap || reqs[0].PromptTokens != 20 || reqs[1].OutputTokens != 1 {
				t.Errorf("%s %s: %+v", name, tc.unit, reqs)
			}
			if ClampedCount(src) != (Clamps{Outputs: 1}) {
				t.Errorf("%s: clamps %+v", name, ClampedCount(src))
			}
		}
	}
	dt := "ts,in,out\n2024-05-10 00:00:00.004+00:00,3,4\n2024-05-10T02:00:01Z,3,4\n"
	reqs, err := drain(NewMappedCSV(strings.NewReader(dt), "m.csv", mappedSpec("datetime", nil)), 10)
	if err != nil || len(reqs) != 2 || reqs[1].ArrivalNs != 7200996e6 {
		t.Errorf("datetime: %+v, %v", reqs, err)
	}
	epoch := "ts,in,out\n1717200000123456789,3,4\n1717200000123456790,3,4\n"
	reqs, err = drain(NewMappedCSV(strings.NewReader(epoch), "m.csv", mappedSpec("ns", nil)), 10)
	if err != nil || reqs[1].ArrivalNs != 1 {
		t.Errorf("epoch ns keep every digit: %+v, %v", reqs, err)
	}
}

// TestMappedSessions: a session's row begins with its previous row's
// prompt and answer, named segments, when its prompt holds them; a turn
// out of order is an error.
func TestMappedSessions(t *testing.T) {
	spec := mappedSpec("s", func(c *Columns) { c.Session, c.Turn = "sid", "k" })
	doc := "ts,sid,k,in,out\n0,a,1,100,10\n1,b,1,50,5\n2,a,2,130,7\n3,,,40,4\n4,a,3,20,3\n"
	reqs, err := drain(NewMappedCSV(strings.NewReader(doc), "m.csv", spec), 10)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	in := func(id int64, n int) kv.Segment { return kv.Segment{ID: segMappedInput | uint64(id), Tokens: n} }
	out := func(id int64, n int) kv.Segment { return kv.Segment{ID: segMappedOutput | uint64(id), Tokens: n} }
	want := [][]kv.Segment{
		{in(0, 100)},
		{in(1, 50)},
		{in(0, 100), out(0, 10), in(2, 20)}, // 130 = 100 + 10 + 20 new
		nil,                                 // no session
		{in(4, 20)},                         // 20 < 137: the history was not resent
	}
	for i, w := range want {
		if !equalSegs(reqs[i].Prefix, w) {
			t.Errorf("request %d: prefix %v, want %v", i, reqs[i].Prefix, w)
		}
	}
	if reqs[2].Output != out(2, 7) || reqs[3].Output != (kv.Segment{}) {
		t.Errorf("outputs %v, %v", reqs[2].Output, reqs[3].Output)
	}
	_, err = drain(NewMappedCSV(strings.NewReader("ts,sid,k,in,out\n0,a,1,10,1\n1,a,3,20,1\n"), "m.csv", spec), 10)
	if err == nil || err.Error() != `m.csv:3: k: turn 3 of session "a" follows its turn 1: a session's rows are in turn order` {
		t.Errorf("turn out of order: %v", err)
	}
}

// TestMappedPrefixIDs: a row's block ids become its prefix, as Mooncake's
// hash_ids do, in either format's list.
func TestMappedPrefixIDs(t *testing.T) {
	spec := mappedSpec("ms", func(c *Columns) { c.PrefixIDs = "ids" })
	spec.BlockTokens = 16
	want := []kv.Segment{{ID: 7, Tokens: 16}, {ID: 8, Tokens: 4}}
	for name, src := range map[string]sim.Source{
		"csv":   NewMappedCSV(strings.NewReader("ts,in,out,ids\n0,20,1,\"[7, 8]\"\n1,20,1,7;8\n2,5,1,\n"), "m.csv", spec),
		"jsonl": NewMappedJSONL(strings.NewReader(`{"ts": 0, "in": 20, "out": 1, "ids": [7, 8]}`+"\n"+`{"ts": 1, "in": 5, "out": 1, "ids": []}`), "m.jsonl", spec),
	} {
		reqs, err := drain(src, 10)
		if err != nil || !equalSegs(reqs[0].Prefix, want) || reqs[len(reqs)-1].Prefix != nil {
			t.Errorf("%s: %+v, %v", name, reqs, err)
		}
	}
}

// TestMappedErrors: a mapping naming a missing column, and each bad value,
// is one error naming the file, the line and the column.
func TestMappedErrors(t *testing.T) {
	plain := mappedSpec("ms", nil)
	ids := mappedSpec("ms", func(c *Columns) { c.PrefixIDs = "ids" })
	ids.BlockTokens = 16
	classed := classedSpec()
	csv := func(s string, spec Trace) sim.Source { return NewMappedCSV(strings.NewReader(s), "m.csv", spec) }
	jsonl := func(s string) sim.Source { return NewMappedJSONL(strings.NewReader(s), "m.jsonl", plain) }
	for _, tc := range []struct {
		name string
		src  sim.Source
		want string
	}{
		{"missing column", csv("time,in,out\n1,2,3\n", plain), `m.csv:1: ts: no such column (columns.timestamp names it) in the header "time,in,out"`},
		{"empty", csv("", plain), "m.csv: empty file: want a header row naming the mapped columns"},
		{"short row", csv("ts,in,out\n1,2,3\n2,3\n", plain), "m.csv:3: out: missing (columns.output_tokens names it)"},
		{"time", csv("ts,in,out\nsoon,2,3\n", plain), `m.csv:2: ts: "soon" is not a time in ms within 100 years of 0`},
		{"datetime", csv("ts,in,out\n2024-13-01 00:00:00,2,3\n", mappedSpec("datetime", nil)), `m.csv:2: ts: "2024-13-01 00:00:00" is not a datetime`},
		{"tokens", csv("ts,in,out\n1,two,3\n", plain), `m.csv:2: in: "two" is not an integer`},
		{"backwards", csv("ts,in,out\n5,1,1\n4,1,1\n", plain), "m.csv:3: ts: timestamp goes backwards"},
		{"ids", csv("ts,in,out,ids\n1,20,1,7;x\n", ids), `m.csv:2: ids: "x" is not a block id`},
		{"ids too many", csv("ts,in,out,ids\n1,20,1,7 8 9\n", ids), "m.csv:2: ids: 3 blocks of 16 tokens need in > 32, got 20"},
		{"jsonl missing key", jsonl(`{"ts": 1, "in": 2}`), "m.jsonl:1: out: missing (columns.output_tokens names it)"},
		{"jsonl not an object", jsonl("[1]"), "m.jsonl:1: cannot use a JSON array as an object"},
		{"jsonl syntax", jsonl(`{"ts": 1,`), "m.jsonl:1: column"},
		{"class", csv("ts,in,out,cls\n1,2,3,batch\n2,2,3,bulk\n", classed),
			`m.csv:3: cls: "bulk" is not a class of workload.classes (interactive, batch)`},
		{"missing class", csv("ts,in,out\n1,2,3\n", classed), `m.csv:1: cls: no such column (columns.class names it)`},
		{"jsonl class", NewMappedJSONL(strings.NewReader(`{"ts": 1, "in": 2, "out": 3, "cls": 1}`), "m.jsonl", classed),
			`m.jsonl:1: cls: "1" is not a class of workload.classes`},
		{"jsonl ids", NewMappedJSONL(strings.NewReader(`{"ts": 1, "in": 2, "out": 3, "ids": "7"}`), "m.jsonl", ids),
			"m.jsonl:1: ids: want a list of block ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := drain(tc.src, 10)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ParseError starting %q", err, tc.want)
			}
		})
	}
}

// classedSpec maps the test files' columns and a class column, cls, of
// two classes.
func classedSpec() Trace {
	spec := mappedSpec("s", func(c *Columns) { c.Class = "cls" })
	spec.ClassNames = []string{"interactive", "batch"}
	return spec
}

// TestMappedClasses: a class column tags each row's request with the
// class it names, in a CSV file and a JSONL one; the mapping needs the
// workload's classes.
func TestMappedClasses(t *testing.T) {
	spec := classedSpec()
	csv := "ts,in,out,cls\n0,10,1,batch\n1,10,1, interactive\n2,10,1,batch\n"
	jsonl := `{"ts": 0, "in": 10, "out": 1, "cls": "batch"}` + "\n" + `{"ts": 1, "in": 10, "out": 1, "cls": "interactive"}` +
		"\n" + `{"ts": 2, "in": 10, "out": 1, "cls": "batch"}` + "\n"
	for name, src := range map[string]sim.Source{
		"csv":   NewMappedCSV(strings.NewReader(csv), "m.csv", spec),
		"jsonl": NewMappedJSONL(strings.NewReader(jsonl), "m.jsonl", spec),
	} {
		reqs, err := drain(src, 10)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := []uint8{reqs[0].Class, reqs[1].Class, reqs[2].Class}; !slices.Equal(got, []uint8{1, 0, 1}) {
			t.Errorf("%s: classes %v, want [1 0 1]", name, got)
		}
	}
	spec.ClassNames = nil
	if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), "columns.class: needs workload.classes") {
		t.Errorf("a class column without classes: %v", err)
	}
}

// TestMappedSample replays the shipped CSV sample with its sessions.
func TestMappedSample(t *testing.T) {
	spec := Trace{Format: FormatCSV, TimestampUnit: "ms", Columns: &Columns{Timestamp: "ts_ms",
		InputTokens: "prompt_len", OutputTokens: "completion_len", Session: "session_id", Turn: "turn"}}
	reqs := drainAll(t, NewMappedCSV(openFile(t, "../traces/mapped-sample.csv"), "mapped-sample.csv", spec))
	checkInvariants(t, reqs)
	shared := 0
	for _, r := range reqs {
		if len(r.Prefix) > 1 {
			shared++
		}
	}
	if len(reqs) != 300 || shared < 100 {
		t.Errorf("%d requests, %d with a session's history; want 300, most later turns", len(reqs), shared)
	}
}

func FuzzMappedCSV(f *testing.F) {
	spec := mappedSpec("ms", func(c *Columns) { c.Session, c.Turn = "sid", "k" })
	fuzzTrace(f, func(d []byte) sim.Source { return NewMappedCSV(bytes.NewReader(d), "f.csv", spec) },
		"ts,sid,k,in,out\n0,a,1,100,10\n1,b,1,50,5\n2,a,2,130,7\n3,,,40,4\n",
		"in,out,ts,k,sid\n1,1,1e300,1,x\n", "ts,in\n")
}

func FuzzMappedJSONL(f *testing.F) {
	spec := mappedSpec("s", func(c *Columns) { c.PrefixIDs = "ids" })
	spec.BlockTokens = 4
	fuzzTrace(f, func(d []byte) sim.Source { return NewMappedJSONL(bytes.NewReader(d), "f.jsonl", spec) },
		`{"ts": 0, "in": 20, "out": 1, "ids": [7, 8]}`+"\n"+`{"ts": "1.5", "in": "5", "out": 1, "ids": []}`,
		`{"ts": -1e20, "in": 1, "out": 1, "ids": [1]}`, "null\n{}", "")
}
