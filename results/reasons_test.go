package results

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestReasonKind(t *testing.T) {
	for in, want := range map[string]string{
		"too long: 9000 tokens (prompt 8000 + output 1000) exceed the 8192 any instance can hold": "too long: N tokens (prompt N + output N) exceed the N any instance can hold",
		"too long for decode-1: 300 tokens exceed its 256":                                        "too long for decode-1: N tokens exceed its N",
		"rejected: refused by decoders 8 times":                                                   "rejected: refused by decoders N times",
		"llama-3.1-70b on h100 needs 1.5GB, has 0.25.":                                            "llama-3.1-70b on h100 needs NGB, has N.",
		"":   "unspecified",
		"42": "N",
	} {
		if got := ReasonKind(in); got != want {
			t.Errorf("ReasonKind(%q) = %q, want %q", in, got, want)
		}
	}
}

// drops returns n dropped records whose reasons differ only in their own
// figures, after one rejected, one dropped for another cause and n/2
// dropped at one instance.
func drops(n int) []Record {
	recs := []Record{{ID: 0, Status: Rejected, Reason: "rejected: refused by decoders 8 times"},
		{ID: 1, Status: Dropped, Reason: "too long for decode-0: 900 tokens exceed its 512"}}
	for i := range n {
		recs = append(recs, Record{ID: int64(len(recs)), Status: Dropped,
			Reason: fmt.Sprintf("too long: %d tokens (prompt %d + output %d) exceed the 8192 any instance can hold", 9000+i, 8000+i, 1000)})
	}
	for range n / 2 {
		recs = append(recs, Record{ID: int64(len(recs)), Status: Dropped, Reason: "too long for decode-1: 9000 tokens exceed its 512"})
	}
	return recs
}

// TestReasonsGrouped: 2,000 drops of one cause with 2,000 different sizes
// are one group, counted, with the first request as the example; groups
// come most first; the table shows each in one line.
func TestReasonsGrouped(t *testing.T) {
	s := Summarize(drops(2000), nil, RunInfo{})
	want := []ReasonGroup{
		{Kind: "too long: N tokens (prompt N + output N) exceed the N any instance can hold", Count: 2000, ExampleRequest: 2,
			ExampleReason: "too long: 9000 tokens (prompt 8000 + output 1000) exceed the 8192 any instance can hold"},
		{Kind: "too long for decode-1: N tokens exceed its N", Count: 1000, ExampleRequest: 2002,
			ExampleReason: "too long for decode-1: 9000 tokens exceed its 512"},
		{Kind: "too long for decode-0: N tokens exceed its N", Count: 1, ExampleRequest: 1,
			ExampleReason: "too long for decode-0: 900 tokens exceed its 512"},
	}
	if !slices.Equal(s.DropReasons, want) || len(s.RejectReasons) != 1 || s.RejectReasons[0].Count != 1 {
		t.Errorf("drop reasons %+v\nwant %+v\nreject reasons %+v", s.DropReasons, want, s.RejectReasons)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	wantLines := []string{"requests    total 3002   completed 0   rejected 1   dropped 3001",
		"  rejected  1 like request 0: rejected: refused by decoders 8 times",
		"  dropped   2000 like request 2: too long: 9000 tokens (prompt 8000 + output 1000) exceed the 8192 any instance can hold",
		"  dropped   1000 like request 2002: too long for decode-1: 9000 tokens exceed its 512",
		"  dropped   1 like request 1: too long for decode-0: 900 tokens exceed its 512"}
	if got := lines[1:6]; !slices.Equal(got, wantLines) {
		t.Errorf("table lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, s); err != nil || js.Len() > 4000 {
		t.Errorf("summary.json is %d bytes (%v); 3,001 drops of 3 kinds should take little room", js.Len(), err)
	}
}

func TestReasonsTableCapped(t *testing.T) {
	recs := make([]Record, 5)
	for i := range recs {
		recs[i] = Record{ID: int64(i), Status: Dropped, Reason: fmt.Sprintf("cause %c", 'a'+i)}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, Summarize(recs, nil, RunInfo{})); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "  dropped   1 like"); n != maxReasonLines ||
		!strings.Contains(buf.String(), "  dropped   and 2 more kinds of reason (summary.json drop_reasons)\n") {
		t.Errorf("%d reason lines, want %d and a line for the rest:\n%s", n, maxReasonLines, buf.String())
	}
	empty := Summarize([]Record{{Status: Completed}}, nil, RunInfo{})
	if empty.DropReasons == nil || empty.RejectReasons == nil {
		t.Error("no reasons must be [] in summary.json, not null")
	}
}
