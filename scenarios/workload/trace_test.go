package workload

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"handoff/models/kv"
	"handoff/sim"
)

func openFile(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestAzureFixture(t *testing.T) {
	src := NewAzure(openFile(t, "testdata/azure-conv-head.csv"), "azure-conv-head.csv")
	reqs, err := drain(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	if len(reqs) != 10 {
		t.Fatalf("got %d requests, want 10", len(reqs))
	}
	// Row 2 is at 18:15:50.9951690, row 1 at 18:15:46.6805900: 4.3145790 s later.
	// Row 10 is at 18:15:55.1455750: 8.4649850 s after row 1.
	want := []sim.Request{
		{ID: 0, ArrivalNs: 0, PromptTokens: 374, OutputTokens: 44},
		{ID: 1, ArrivalNs: 4_314_579_000, PromptTokens: 396, OutputTokens: 109},
	}
	for i, w := range want {
		if !equalReq(reqs[i], w) {
			t.Errorf("request %d = %+v, want %+v", i, reqs[i], w)
		}
	}
	last := sim.Request{ID: 9, ArrivalNs: 8_464_985_000, PromptTokens: 209, OutputTokens: 152}
	if !equalReq(reqs[9], last) {
		t.Errorf("last = %+v, want %+v", reqs[9], last)
	}
	if c := ClampedCount(src); c != (Clamps{}) {
		t.Errorf("Clamped = %+v, want none", c)
	}
}

func TestAzure2024Offsets(t *testing.T) {
	src := NewAzure(openFile(t, "testdata/azure2024-sample.csv"), "azure2024-sample.csv")
	reqs, err := drain(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	// 00:00:00.004 UTC; 02:00:01.5+02:00 = 00:00:01.5 UTC; 00:00:02 UTC.
	wantNs := []int64{0, 1_496_000_000, 1_996_000_000}
	for i, w := range wantNs {
		if reqs[i].ArrivalNs != w {
			t.Errorf("request %d arrives at %d ns, want %d", i, reqs[i].ArrivalNs, w)
		}
	}
	if reqs[1].OutputTokens != 1 || ClampedCount(src) != (Clamps{Outputs: 1}) {
		t.Errorf("0 generated tokens: got output %d, clamped %+v; want 1, one output", reqs[1].OutputTokens, ClampedCount(src))
	}
}

func TestMooncakeFixture(t *testing.T) {
	src := NewMooncake(openFile(t, "testdata/mooncake-conv-9-16.jsonl"), "m.jsonl", MooncakeBlockTokens)
	reqs, err := drain(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	if len(reqs) != 8 {
		t.Fatalf("got %d requests, want 8", len(reqs))
	}
	if reqs[1].ArrivalNs != 0 || reqs[2].ArrivalNs != 3_000_000_000 {
		t.Errorf("arrivals %d, %d; want 0, 3e9 (timestamps 0 and 3000 ms)", reqs[1].ArrivalNs, reqs[2].ArrivalNs)
	}
	// Line 6: input 2012, hash_ids [0, 427, 428, 429]: 3·512 + 476.
	want := []kv.Segment{{ID: 0, Tokens: 512}, {ID: 427, Tokens: 512}, {ID: 428, Tokens: 512}, {ID: 429, Tokens: 476}}
	r := reqs[5]
	if r.PromptTokens != 2012 || r.OutputTokens != 354 || !equalSegs(r.Prefix, want) {
		t.Errorf("request 5 = %+v, want prompt 2012, output 354, prefix %v", r, want)
	}
	for i, r := range reqs {
		if tokens := segTokens(r.Prefix); tokens != r.PromptTokens {
			t.Errorf("request %d: segments hold %d tokens, prompt %d", i, tokens, r.PromptTokens)
		}
	}
}

func TestBurstGPTLayouts(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    []sim.Request
		clamped Clamps
	}{
		{"testdata/burstgpt-v1-sample.csv", []sim.Request{
			{ID: 0, ArrivalNs: 0, PromptTokens: 472, OutputTokens: 18},
			{ID: 1, ArrivalNs: 40e9, PromptTokens: 1087, OutputTokens: 1}, // failure: 0 response tokens
			{ID: 2, ArrivalNs: 113e9, PromptTokens: 417, OutputTokens: 276},
			{ID: 3, ArrivalNs: 113.5e9, PromptTokens: 91, OutputTokens: 120},
		}, Clamps{Outputs: 1}},
		{"testdata/burstgpt-v3-sample.csv", []sim.Request{
			{ID: 0, ArrivalNs: 0, PromptTokens: 300, OutputTokens: 40},
			{ID: 1, ArrivalNs: 1.5e9, PromptTokens: 512, OutputTokens: 1},
			{ID: 2, ArrivalNs: 2.75e9, PromptTokens: 128, OutputTokens: 256},
		}, Clamps{Outputs: 1}},
	} {
		src := NewBurstGPT(openFile(t, tc.file), tc.file)
		reqs, err := drain(src, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != len(tc.want) {
			t.Fatalf("%s: %d requests, want %d", tc.file, len(reqs), len(tc.want))
		}
		for i := range reqs {
			if !equalReq(reqs[i], tc.want[i]) {
				t.Errorf("%s: request %d = %+v, want %+v", tc.file, i, reqs[i], tc.want[i])
			}
		}
		if c := ClampedCount(src); c != tc.clamped {
			t.Errorf("%s: Clamped = %+v, want %+v", tc.file, c, tc.clamped)
		}
	}
}

func TestFullTraces(t *testing.T) {
	for _, tc := range []struct {
		path string
		open func(f *os.File, name string) sim.Source
		rows int
	}{
		{"../traces/azure-conv.csv", func(f *os.File, n string) sim.Source { return NewAzure(f, n) }, 19366},
		{"../traces/azure-code.csv", func(f *os.File, n string) sim.Source { return NewAzure(f, n) }, 8819},
		{"../traces/mooncake-conversation.jsonl", func(f *os.File, n string) sim.Source {
			return NewMooncake(f, n, MooncakeBlockTokens)
		}, 12031},
	} {
		src := tc.open(openFile(t, tc.path), tc.path)
		reqs, err := drain(src, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, reqs)
		if len(reqs) != tc.rows {
			t.Errorf("%s: %d rows, want %d", tc.path, len(reqs), tc.rows)
		}
		// Both traces span about an hour.
		if span := reqs[len(reqs)-1].ArrivalNs; span < 3000e9 || span > 3700e9 {
			t.Errorf("%s: spans %d ns, want about 1 h", tc.path, span)
		}
		if c := ClampedCount(src); c != (Clamps{}) {
			t.Errorf("%s: Clamped = %+v, want none", tc.path, c)
		}
	}
}

func TestMalformed(t *testing.T) {
	const az = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const bg = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	azure := func(s string) sim.Source { return NewAzure(strings.NewReader(s), "t.csv") }
	moon := func(s string) sim.Source { return NewMooncake(strings.NewReader(s), "t.jsonl", 512) }
	burst := func(s string) sim.Source { return NewBurstGPT(strings.NewReader(s), "b.csv") }
	for _, tc := range []struct {
		name  string
		src   sim.Source
		want  string
		valid int // requests yielded before the error
	}{
		{"azure not an integer", azure(az + "2023-11-16 18:15:46.68,12a,4\n"), `t.csv:2: ContextTokens: "12a" is not an integer`, 0},
		{"azure negative", azure(az + "2023-11-16 18:15:46,12,-3\n"), `t.csv:2: GeneratedTokens: -3 is negative`, 0},
		{"azure too large", azure(az + "2023-11-16 18:15:46,4000000000,3\n"), `t.csv:2: ContextTokens: 4000000000 exceeds the limit`, 0},
		{"azure bad month", azure(az + "2023-13-16 18:15:46,1,1\n"), `t.csv:2: TIMESTAMP: "2023-13-16 18:15:46" is not a datetime`, 0},
		{"azure bad offset", azure(az + "2023-11-16 18:15:46+2:00,1,1\n"), `t.csv:2: TIMESTAMP: "2023-11-16 18:15:46+2:00" is not a datetime`, 0},
		{"azure short row", azure(az + "2023-11-16 18:15:46,1,1\n2023-11-16 18:15:47,12\n"), `t.csv:3: 2 fields, want at least 3`, 1},
		{"azure unsorted", azure(az + "2023-11-16 18:15:46,1,1\n2023-11-16 18:15:45.5,1,1\n"), `t.csv:3: TIMESTAMP: timestamp goes backwards (0.5 s before`, 1},
		{"azure header", azure("time,ctx,gen\n"), `t.csv:1: header: no column "TIMESTAMP"`, 0},
		{"azure empty", azure(""), `t.csv: empty file: expected a header row`, 0},
		{"azure quote", azure(az + "2023-11-16 18:15:46,1\"2,3\n"), `t.csv:2: column 22: bare " in non-quoted-field`, 0},
		{"mooncake syntax", moon(`{"timestamp": 0,` + "\n"), `t.jsonl:1: column 16: unexpected end of JSON input`, 0},
		{"mooncake type", moon(`{"timestamp": 0, "input_length": "12", "output_length": 3}`), `t.jsonl:1: input_length: cannot use a JSON string as an integer`, 0},
		{"mooncake id type", moon(`{"timestamp": 0, "input_length": 12, "output_length": 3, "hash_ids": [-1]}`), `t.jsonl:1: hash_ids: cannot use a JSON number -1 as a non-negative integer`, 0},
		{"mooncake missing output", moon(`{"timestamp": 0, "input_length": 12}`), `t.jsonl:1: output_length: missing`, 0},
		{"mooncake missing timestamp", moon(`{"input_length": 12, "output_length": 3}`), `t.jsonl:1: timestamp: missing`, 0},
		{"mooncake negative", moon(`{"timestamp": 0, "input_length": 12, "output_length": -3}`), `t.jsonl:1: output_length: -3 is negative`, 0},
		{"mooncake short input", moon(`{"timestamp": 0, "input_length": 1000, "output_length": 3, "hash_ids": [1, 2, 3]}`),
			`t.jsonl:1: hash_ids: 3 blocks of 512 tokens need input_length > 1024, got 1000`, 0},
		{"mooncake unsorted", moon("{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n\n{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}\n"),
			`t.jsonl:3: timestamp: timestamp goes backwards (0.001 s before`, 1},
		{"burstgpt seconds", burst(bg + "abc,ChatGPT,1,1,2,API log\n"), `b.csv:2: Timestamp: "abc" is not a number of seconds`, 0},
		{"burstgpt header", burst("Timestamp,Model,Request tokens,Total tokens\n"), `b.csv:1: header: no column "Response tokens"`, 0},
		{"burstgpt float tokens", burst(bg + "1,ChatGPT,1.5,1,2,API log\n"), `b.csv:2: Request tokens: "1.5" is not an integer`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, err := drain(tc.src, 100)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want prefix %q", err, tc.want)
			}
			if len(reqs) != tc.valid {
				t.Errorf("%d requests before the error, want %d", len(reqs), tc.valid)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%T is not a *ParseError", err)
			}
			if _, again := tc.src.Next(new(sim.Request)); again == nil || again.Error() != err.Error() {
				t.Errorf("after the error, Next returned %v", again)
			}
		})
	}
}

// fuzzTrace feeds data to a reader and checks that it never panics, that
// whatever it yields before an error satisfies the source invariants, and
// that the error is one short line.
func fuzzTrace(f *testing.F, open func(data []byte) sim.Source, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := drain(open(data), 1000)
		checkInvariants(t, reqs)
		if err != nil && (strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 400) {
			t.Fatalf("error not one short line: %q", err)
		}
	})
}

func fixture(f *testing.F, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return string(b)
}

func FuzzAzure(f *testing.F) {
	fuzzTrace(f, func(d []byte) sim.Source { return NewAzure(bytes.NewReader(d), "f.csv") },
		fixture(f, "testdata/azure-conv-head.csv"), fixture(f, "testdata/azure2024-sample.csv"),
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,12a,4\n",
		"GeneratedTokens,TIMESTAMP\n1,2\n", "")
}

func FuzzMooncake(f *testing.F) {
	fuzzTrace(f, func(d []byte) sim.Source { return NewMooncake(bytes.NewReader(d), "f.jsonl", 512) },
		// Short rows (lines 14 and 17 of the Mooncake conversation trace): the
		// fuzzer minimizes every new input, which is slow for long seeds.
		`{"timestamp": 3000, "input_length": 2012, "output_length": 354, "hash_ids": [0, 427, 428, 429]}`+"\n"+
			`{"timestamp": 3000, "input_length": 915, "output_length": 355, "hash_ids": [0, 462]}`,
		`{"timestamp": 1e300, "input_length": 1, "output_length": 0, "hash_ids": [5]}`,
		`{"timestamp": 0, "input_length": 0, "output_length": 0, "hash_ids": []}`, "\n\n{")
}

func FuzzBurstGPT(f *testing.F) {
	fuzzTrace(f, func(d []byte) sim.Source { return NewBurstGPT(bytes.NewReader(d), "f.csv") },
		fixture(f, "testdata/burstgpt-v1-sample.csv"), fixture(f, "testdata/burstgpt-v3-sample.csv"),
		"Timestamp,Request tokens,Response tokens\nNaN,1,1\n1e400,1,1\n")
}

func BenchmarkAzure(b *testing.B) {
	data, err := os.ReadFile("../traces/azure-conv.csv")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)) / 19366) // bytes per request, roughly
	src := NewAzure(bytes.NewReader(data), "azure-conv.csv")
	var r sim.Request
	for b.Loop() {
		ok, err := src.Next(&r)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			src = NewAzure(bytes.NewReader(data), "azure-conv.csv")
		}
	}
}

func equalReq(a, b sim.Request) bool {
	return a.ID == b.ID && a.ArrivalNs == b.ArrivalNs && a.PromptTokens == b.PromptTokens &&
		a.OutputTokens == b.OutputTokens && equalSegs(a.Prefix, b.Prefix)
}

func equalSegs(a, b []kv.Segment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func segTokens(p []kv.Segment) int {
	n := 0
	for _, s := range p {
		n += s.Tokens
	}
	return n
}

// TestZeroPromptClamped: an Azure row with a 0-token prompt is served as a
// 1-token prompt and counted apart from 0-token outputs, and each kind
// gets its warning line.
func TestZeroPromptClamped(t *testing.T) {
	const csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2023-11-16 18:00:00,0,5\n2023-11-16 18:00:01,0,0\n2023-11-16 18:00:02,7,3\n"
	src := NewAzure(strings.NewReader(csv), "t.csv")
	reqs, err := drain(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].PromptTokens != 1 || reqs[1].PromptTokens != 1 || reqs[1].OutputTokens != 1 {
		t.Errorf("requests %+v, want 0 lengths served as 1", reqs)
	}
	c := ClampedCount(src)
	if c != (Clamps{Prompts: 2, Outputs: 1}) {
		t.Errorf("clamped %+v, want 2 prompts and 1 output", c)
	}
	want := []string{"workload: 2 requests had a 0-token prompt, served as 1 token",
		"workload: 1 request had 0 output tokens, served as 1 token"}
	if got := c.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if w := (Clamps{}).Warnings(); len(w) != 0 {
		t.Errorf("no clamp: warnings %q", w)
	}
}
