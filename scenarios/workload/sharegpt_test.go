package workload

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"handoff/sim"
)

func shareGPTFrom(s string) sim.Source {
	return NewShareGPT(strings.NewReader(s), "s.json", poisson(10), newRNG(1))
}

// turns writes a ShareGPT entry with the given turn texts.
func turns(texts ...string) string {
	var b strings.Builder
	b.WriteString(`{"id": "x", "conversations": [`)
	for i, t := range texts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"from": "human", "value": "` + t + `"}`)
	}
	b.WriteString("]}")
	return b.String()
}

// TestShareGPTLengthsAndFilter: lengths are ⌈characters/4⌉ (or a turn's
// tokens), the first two turns only; vLLM's filter skips and counts
// entries without two turns and pairs too short or too long.
func TestShareGPTLengthsAndFilter(t *testing.T) {
	x := func(n int) string { return strings.Repeat("é", n) } // one character, two bytes
	doc := "[\n" + strings.Join([]string{
		turns(x(40), x(17), x(9000)), // 10 and 5 tokens; the third turn is not read
		turns(x(40)),                 // one turn: skipped
		`{"id": "no conversations"}`, // skipped, as vLLM filters it
		turns(x(12), x(40)),          // a 3-token prompt: skipped
		turns(x(4100), x(40)),        // a 1025-token prompt: skipped
		turns(x(4000), x(4000)),      // 1000 + 1000 tokens: kept
		turns(x(4000), x(4400)),      // 1000 + 1100 > 2048: skipped
		`{"conversations": [{"value": "ab", "tokens": 7}, {"from": "gpt", "value": "", "tokens": 300}]}`, // counts given
	}, ",\n") + "\n]"
	src := shareGPTFrom(doc)
	reqs, err := drain(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	want := [][2]int{{10, 5}, {1000, 1000}, {7, 300}}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, w := range want {
		if reqs[i].PromptTokens != w[0] || reqs[i].OutputTokens != w[1] || reqs[i].Prefix != nil {
			t.Errorf("request %d: %d/%d tokens, want %d/%d", i, reqs[i].PromptTokens, reqs[i].OutputTokens, w[0], w[1])
		}
	}
	if c := ClampedCount(src); c != (Clamps{Skipped: 5}) {
		t.Errorf("clamps %+v, want 5 skipped", c)
	}
	if w := ClampedCount(src).Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], "workload: 5 ShareGPT entries skipped as vllm bench serve skips them") {
		t.Errorf("warnings %q", w)
	}
}

// TestShareGPTArrivals: requests arrive by the scenario's process, drawn
// as the synthetic generator draws them: the same seed, the same times.
func TestShareGPTArrivals(t *testing.T) {
	entry := turns(strings.Repeat("a", 80), strings.Repeat("b", 80))
	doc := "[" + strings.Repeat(entry+",", 1999) + entry + "]"
	run := func(seed uint64) []sim.Request {
		reqs, err := drain(NewShareGPT(strings.NewReader(doc), "s.json", Arrival{Process: ProcessConstant, Rate: 4}, rand.New(rand.NewPCG(seed, 1))), 5000)
		if err != nil {
			t.Fatal(err)
		}
		return reqs
	}
	reqs := run(1)
	if len(reqs) != 2000 || reqs[0].ArrivalNs != 0 || reqs[1999].ArrivalNs != 1999*250e6 {
		t.Fatalf("%d requests, arrivals %d … %d; want 2000, 0 … 499.75 s", len(reqs), reqs[0].ArrivalNs, reqs[len(reqs)-1].ArrivalNs)
	}
	var gaps []float64
	p := drainAll(t, NewShareGPT(strings.NewReader(doc), "s.json", poisson(20), newRNG(3)))
	for i := 1; i < len(p); i++ {
		gaps = append(gaps, float64(p[i].ArrivalNs-p[i-1].ArrivalNs)/1e9)
	}
	if mean, std := meanStd(gaps); mean < 0.045 || mean > 0.055 || std < 0.04 || std > 0.06 {
		t.Errorf("Poisson at 20/s: gaps mean %.4f s, std %.4f s; want about 0.05 and 0.05", mean, std)
	}
}

func drainAll(t *testing.T, src sim.Source) []sim.Request {
	t.Helper()
	reqs, err := drain(src, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// TestShareGPTErrors: a malformed file is one error naming the line and
// the entry's JSON path.
func TestShareGPTErrors(t *testing.T) {
	ok := turns("aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb")
	for _, tc := range []struct {
		name, doc, want string
		valid           int
	}{
		{"empty", "", "s.json: empty file: want a JSON list of conversations (ShareGPT)", 0},
		{"object", `{"conversations": []}`, `s.json:1: want a JSON list of conversations (ShareGPT), got "{"`, 0},
		{"entry", "[\n" + ok + ",\n42]", "s.json:3: [1]: want an object with conversations, got a number", 1},
		{"conversations", "[\n" + ok + ",\n" + `{"conversations": "hi"}` + "]", "s.json:3: [1].conversations: want a list of turns, got a string", 1},
		{"turn", `[{"conversations": ["hi", "there"]}]`, `s.json:1: [0].conversations[0]: want a turn {"from": ..., "value": ...}, got a string`, 0},
		{"value type", "[\n\n" + `{"conversations": [{"value": "hi"}, {"value": 5}]}]`, "s.json:3: [0].conversations[1].value: cannot use a JSON number as a string", 0},
		{"no value", `[{"conversations": [{"from": "human"}, {"value": "x"}]}]`, "s.json:1: [0].conversations[0].value: missing", 0},
		{"tokens", `[{"conversations": [{"value": "x", "tokens": -4}, {"value": "x"}]}]`, "s.json:1: [0].conversations[0].tokens: -4 is negative", 0},
		{"syntax", "[\n" + ok + ",\n{\"conversations\": [}]", "s.json:3: invalid character '}'", 1},
		{"truncated", "[\n" + ok + ",\n{\"conversations\": [", "s.json:3: the file ends inside a JSON value", 1},
		{"trailing", "[" + ok + "]\n[]", `s.json:2: "[" after the list of conversations`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := shareGPTFrom(tc.doc)
			reqs, err := drain(src, 100)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ParseError starting %q", err, tc.want)
			}
			if len(reqs) != tc.valid {
				t.Errorf("%d requests before the error, want %d", len(reqs), tc.valid)
			}
			if _, again := src.Next(new(sim.Request)); again == nil || again.Error() != err.Error() {
				t.Errorf("after the error, Next returned %v", again)
			}
		})
	}
}

// TestJSONReadersCapValues: a JSON trace whose one value never ends fails
// at the cap instead of buffering on, naming the line it reached.
func TestJSONReadersCapValues(t *testing.T) {
	for name, src := range map[string]sim.Source{
		"sharegpt": NewShareGPT(endless("[\n{\"conversations\": [{\"value\": \"", 'a'), "z.json", poisson(1), newRNG(1)),
		"otlp":     NewOTLP(endless("{\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [\n{\"name\": \"", 'a'), "z.json"),
	} {
		_, err := drain(src, 10)
		if err == nil || !strings.HasPrefix(err.Error(), "z.json:2: a value longer than 16777216 bytes: not a trace") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// TestShareGPTSample replays the shipped sample: every entry read, the
// filtered ones counted.
func TestShareGPTSample(t *testing.T) {
	src := NewShareGPT(openFile(t, "../traces/sharegpt-sample.json"), "sharegpt-sample.json", poisson(4), newRNG(1))
	reqs := drainAll(t, src)
	checkInvariants(t, reqs)
	if n, skipped := len(reqs), ClampedCount(src).Skipped; n+skipped != 300 || skipped == 0 || n < 250 {
		t.Errorf("%d requests and %d skipped, want 300 entries, a few skipped", n, skipped)
	}
}

func FuzzShareGPT(f *testing.F) {
	fuzzTrace(f, func(d []byte) sim.Source { return NewShareGPT(bytes.NewReader(d), "f.json", poisson(10), newRNG(1)) },
		"["+turns("aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb")+","+turns("x")+"]",
		`[{"conversations": [{"value": "x", "tokens": 12}, {"value": "y", "tokens": "4.0"}]}]`,
		`[{"conversations": [{"value": 1}, {}]}, null, []]`, "[", "")
}
