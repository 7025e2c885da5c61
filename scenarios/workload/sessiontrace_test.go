package workload

import (
	"strings"
	"testing"
)

const sessionCSV = `session_id,turn,timestamp,input_tokens,output_tokens,think_ms
chat-a,1,1000,100,20,
chat-a,2,,30,10,1500
chat-a,3,,40,5,250.5
tool-b,1,1000.5,500,8,
tool-c,1,4000,60,0,
tool-c,2,,0,9,0
`

// TestSessionTraceCSV reads three sessions by hand: starts from the first
// at 0, prompts grown by the previous prompt and output plus the new
// input, think times in ns, zero lengths clamped and counted.
func TestSessionTraceCSV(t *testing.T) {
	src := NewSessionTrace(strings.NewReader(sessionCSV), "s.csv", 0)
	got, err := drainSessions(t, src)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		startNs          int64
		prompts, outputs []int
		thinkNs          []int64
	}
	wants := []want{
		{0, []int{100, 150, 200}, []int{20, 10, 5}, []int64{0, 1500e6, 250.5e6}},
		{500_000, []int{500}, []int{8}, []int64{0}},
		{3000e6, []int{60, 62}, []int{1, 9}, []int64{0, 0}},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d sessions, want %d", len(got), len(wants))
	}
	for s, w := range wants {
		if got[s][0].req.ArrivalNs != w.startNs || len(got[s]) != len(w.prompts) {
			t.Fatalf("session %d: starts %d ns with %d turns, want %d ns, %d", s, got[s][0].req.ArrivalNs, len(got[s]), w.startNs, len(w.prompts))
		}
		for k, tt := range got[s] {
			if tt.req.PromptTokens != w.prompts[k] || tt.req.OutputTokens != w.outputs[k] || tt.thinkNs != w.thinkNs[k] ||
				tt.req.Session != int32(s) || tt.req.Turn != uint16(k+1) {
				t.Errorf("session %d turn %d: %+v think %d, want prompt %d output %d think %d", s, k+1, tt.req, tt.thinkNs,
					w.prompts[k], w.outputs[k], w.thinkNs[k])
			}
		}
	}
	// tool-c's first output and its second input.
	if n := ClampedCount(src); n != (Clamps{Prompts: 1, Outputs: 1}) {
		t.Errorf("clamped %+v, want a prompt and an output", n)
	}
}

// TestSessionTraceJSONL: the same trace as JSON lines reads the same.
func TestSessionTraceJSONL(t *testing.T) {
	jsonl := `{"session_id": "chat-a", "turn": 1, "timestamp": 1000, "input_tokens": 100, "output_tokens": 20}
{"session_id": "chat-a", "turn": 2, "input_tokens": 30, "output_tokens": 10, "think_ms": 1500}

{"session_id": "chat-a", "turn": 3, "input_tokens": 40, "output_tokens": 5, "think_ms": 250.5}
{"session_id": "tool-b", "turn": 1, "timestamp": 1000.5, "input_tokens": 500, "output_tokens": 8}
{"session_id": "tool-c", "turn": 1, "timestamp": 4000, "input_tokens": 60, "output_tokens": 0}
{"session_id": "tool-c", "turn": 2, "input_tokens": 0, "output_tokens": 9, "think_ms": 0}
`
	a, errA := drainSessions(t, NewSessionTrace(strings.NewReader(sessionCSV), "s.csv", 0))
	b, errB := drainSessions(t, NewSessionTrace(strings.NewReader(jsonl), "s.jsonl", 0))
	if errA != nil || errB != nil || len(a) != len(b) {
		t.Fatalf("%v, %v, %d vs %d sessions", errA, errB, len(a), len(b))
	}
	for s := range a {
		for k := range a[s] {
			if x, y := a[s][k], b[s][k]; x.thinkNs != y.thinkNs || x.req.PromptTokens != y.req.PromptTokens ||
				x.req.OutputTokens != y.req.OutputTokens || x.req.ArrivalNs != y.req.ArrivalNs {
				t.Errorf("session %d turn %d: CSV %+v, JSONL %+v", s, k+1, x, y)
			}
		}
	}
	limited, err := drainSessions(t, NewSessionTrace(strings.NewReader(jsonl), "s.jsonl", 2))
	if err != nil || len(limited) != 2 {
		t.Errorf("limit 2: %d sessions, %v", len(limited), err)
	}
}

// TestSessionTraceErrors: turns out of order and bad values give one error
// naming the file, the line and the field.
func TestSessionTraceErrors(t *testing.T) {
	const head = "session_id,turn,timestamp,input_tokens,output_tokens\n"
	for _, tc := range []struct{ body, want string }{
		{"a,1,0,5,5\na,3,,5,5\n", "s.csv:3: turn: turn 3 of session \"a\" is out of order: want turn 2"},
		{"a,2,0,5,5\n", "s.csv:2: turn: turn 2 of session \"a\" is out of order: a session's first row must be turn 1"},
		{"a,1,0,5,5\nb,1,1,5,5\na,2,,5,5\n", "s.csv:4: turn: turn 2 of session \"a\" is out of order: after turn 1 of session \"b\""},
		{"a,1,0,5,5\na,1,3,5,5\n", "s.csv:3: turn: turn 1 of session \"a\" is out of order: want turn 2"},
		{"a,1,5,5,5\nb,1,1,5,5\n", "s.csv:3: timestamp: timestamp goes backwards"},
		{"a,1,0,-5,5\n", "s.csv:2: input_tokens: -5 is negative"},
		{"a,1,0,5,x\n", "s.csv:2: output_tokens:"},
		{"a,0,0,5,5\n", "s.csv:2: turn:"},
		{",1,0,5,5\n", "s.csv:2: session_id: missing"},
		{"a,1,,5,5\n", "s.csv:2: timestamp:"},
	} {
		_, err := drainSessions(t, NewSessionTrace(strings.NewReader(head+tc.body), "s.csv", 0))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want %q", tc.body, err, tc.want)
		}
	}
	_, err := drainSessions(t, NewSessionTrace(strings.NewReader("session_id,turn,timestamp,input_tokens,output_tokens,think_ms\na,1,0,5,5,\na,2,,5,5,-3\n"), "s.csv", 0))
	if err == nil || !strings.HasPrefix(err.Error(), "s.csv:3: think_ms: -3 is negative") {
		t.Errorf("negative think: %v", err)
	}
	_, err = drainSessions(t, NewSessionTrace(strings.NewReader(`{"session_id": 1, "turn": 1, "timestamp": 0, "input_tokens": 5, "output_tokens": 5}
{"session_id": 1, "turn": 3, "input_tokens": 5, "output_tokens": 5}`), "s.jsonl", 0))
	if err == nil || !strings.HasPrefix(err.Error(), "s.jsonl:2: turn: turn 3 of session \"1\" is out of order") {
		t.Errorf("JSONL out of order: %v", err)
	}
	_, err = drainSessions(t, NewSessionTrace(strings.NewReader(`{"session_id": 1, "turn": 1, "timestamp": 0, "input_tokens": "5", "output_tokens": 5}`), "s.jsonl", 0))
	if want := "s.jsonl:1: input_tokens: cannot use a JSON string as an integer"; err == nil || err.Error() != want {
		t.Errorf("JSONL string for a number: %v, want %q", err, want)
	}
	_, err = drainSessions(t, NewSessionTrace(strings.NewReader(head+"a,1,0,\"5,5\n"), "s.csv", 0))
	if want := "s.csv:2: column "; err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "s.csv") != 1 {
		t.Errorf("CSV quote error: %v, want it to start %q and name the file once", err, want)
	}
}

// FuzzSessionTrace: any input reads without a panic, and a failure is one
// line naming the file.
func FuzzSessionTrace(f *testing.F) {
	f.Add(sessionCSV)
	f.Add(`{"session_id": "x", "turn": 1, "timestamp": 0, "input_tokens": 5, "output_tokens": 5}`)
	f.Add("session_id,turn,timestamp,input_tokens,output_tokens\na,1,0,5,5\na,3,,5,5\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := drainSessions(t, NewSessionTrace(strings.NewReader(s), "f", 0))
		if err != nil && (!strings.HasPrefix(err.Error(), "f") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("error %q", err)
		}
	})
}
