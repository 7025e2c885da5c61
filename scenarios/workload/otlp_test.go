package workload

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"handoff/sim"
)

// span writes an OTLP JSON span: its trace, start (ns) and attributes
// (key: value; an int is written as intValue's string, as the protobuf
// JSON encoding does).
func span(trace string, startNs int64, attrs ...any) string {
	var a []string
	for i := 0; i+1 < len(attrs); i += 2 {
		v := attrs[i+1]
		switch v := v.(type) {
		case int:
			a = append(a, fmt.Sprintf(`{"key": %q, "value": {"intValue": "%d"}}`, attrs[i], v))
		case float64:
			a = append(a, fmt.Sprintf(`{"key": %q, "value": {"doubleValue": %g}}`, attrs[i], v))
		default:
			a = append(a, fmt.Sprintf(`{"key": %q, "value": {"stringValue": %q}}`, attrs[i], v))
		}
	}
	return fmt.Sprintf(`{"traceId": %q, "spanId": "01", "name": "llm_request", "kind": 2, "startTimeUnixNano": "%d", "attributes": [%s]}`,
		trace, startNs, strings.Join(a, ", "))
}

// export wraps spans in one ExportTraceServiceRequest document.
func export(spans ...string) string {
	return `{"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "vllm.llm_engine"}, "spans": [` +
		strings.Join(spans, ", ") + `]}]}]}`
}

const (
	promptKey = "gen_ai.usage.prompt_tokens"
	outputKey = "gen_ai.usage.completion_tokens"
)

// TestOTLPRequests: request spans, over several documents (one a line,
// as the Collector's file exporter writes them) and out of start order,
// are replayed in arrival order; other spans are passed over; P/D's two
// spans of a request are one request; the newer attribute names read too.
func TestOTLPRequests(t *testing.T) {
	doc := export(
		span("t2", 3e9, promptKey, 50, outputKey, 9, "gen_ai.latency.e2e", 0.5),
		span("t1", 1e9+5e6, promptKey, 100, outputKey, 40), // P/D's decode span
	) + "\n" + export(
		span("t1", 1e9, promptKey, 100, outputKey, 1, "gen_ai.request.max_tokens", 1), // its prefill span
		span("t3", 2e9, "http.request.method", "POST"),                                // no usage: not a request
		span("t3", 2e9, "gen_ai.usage.input_tokens", 7, "gen_ai.usage.output_tokens", 0),
	) + "\n"
	src := NewOTLP(strings.NewReader(doc), "o.jsonl")
	reqs, err := drain(src, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, reqs)
	want := []struct {
		at            int64
		prompt, outpt int
	}{{0, 100, 40}, {1e9, 7, 1}, {2e9, 50, 9}}
	if len(reqs) != len(want) {
		t.Fatalf("requests %+v, want %d", reqs, len(want))
	}
	for i, w := range want {
		if r := reqs[i]; r.ArrivalNs != w.at || r.PromptTokens != w.prompt || r.OutputTokens != w.outpt {
			t.Errorf("request %d: %+v, want %+v", i, r, w)
		}
	}
	if ClampedCount(src) != (Clamps{Outputs: 1}) {
		t.Errorf("clamps %+v", ClampedCount(src))
	}
}

// TestOTLPWindow: a span later than the window reaches is an error that
// says so, not a request out of order or a request twice.
func TestOTLPWindow(t *testing.T) {
	read := func(doc string) ([]sim.Request, error) {
		o := NewOTLP(strings.NewReader(doc), "o.json").(*otlp)
		o.window = newArrivalWindow(2)
		return drain(o, 10)
	}
	req := func(trace string, s int64) string { return span(trace, s, promptKey, 5, outputKey, 5) }
	reqs, err := read(export(req("a", 3), req("b", 1), req("c", 2), req("d", 4), req("e", 5)))
	if err != nil || len(reqs) != 5 || reqs[0].ArrivalNs != 0 || reqs[4].ArrivalNs != 4 {
		t.Errorf("within the window: %+v, %v", reqs, err)
	}
	_, err = read(export(req("a", 3), req("b", 4), req("c", 5), req("d", 1)))
	if err == nil || !strings.HasPrefix(err.Error(), "o.json:1: resourceSpans[0].scopeSpans[0].spans[3]: starts before a request already replayed") {
		t.Errorf("out of order: %v", err)
	}
	_, err = read(export(req("a", 1), req("b", 2), req("c", 3), req("a", 4)))
	if err == nil || !strings.Contains(err.Error(), "spans[3]: a span of a request already replayed") {
		t.Errorf("a request's late span: %v", err)
	}
}

// TestOTLPErrors: an export without the expected attributes, or a bad
// value, is one error naming the line and the span's JSON path.
func TestOTLPErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "o.json: empty file: want an OTLP JSON export"},
		{"list", "[]", `o.json:1: want an OTLP JSON export (an object with resourceSpans), got "["`},
		{"not json", "ts,in,out\n", `o.json:1: not JSON (invalid character 's' in literal true (expecting 'r')): want an OTLP JSON export`},
		{"no request spans", export(span("a", 1, "http.request.method", "GET")),
			"o.json: no span carries gen_ai.usage.prompt_tokens or gen_ai.usage.input_tokens"},
		{"no output", "\n" + export(span("a", 1, promptKey, 5)),
			"o.json:2: resourceSpans[0].scopeSpans[0].spans[0].attributes: a request span (it has gen_ai.usage.prompt_tokens) without gen_ai.usage.completion_tokens or gen_ai.usage.output_tokens"},
		{"bad count", export(span("a", 1, promptKey, "many", outputKey, 5)),
			"o.json:1: resourceSpans[0].scopeSpans[0].spans[0].attributes[0] gen_ai.usage.prompt_tokens: want an intValue"},
		{"negative", export(span("a", 1, promptKey, -5, outputKey, 5)),
			"o.json:1: resourceSpans[0].scopeSpans[0].spans[0].attributes[0] gen_ai.usage.prompt_tokens: -5 is negative"},
		{"no start", `{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": 3}}, {"key": "gen_ai.usage.completion_tokens", "value": {"intValue": 3}}]}]}]}]}`,
			"o.json:1: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: missing"},
		{"span type", `{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": 5}]}]}]}`,
			"o.json:1: resourceSpans[0].scopeSpans[0].spans[0].attributes: cannot use a JSON number as a list"},
		{"spans not a list", `{"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}`,
			`o.json:1: resourceSpans[0].scopeSpans[0].spans: want a list, got "{"`},
		{"syntax", export(span("a", 1, promptKey, 3, outputKey, 3)) + "\n{\"resourceSpans\": [}", "o.json:2: invalid character '}'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := drain(NewOTLP(strings.NewReader(tc.doc), "o.json"), 10)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ParseError starting %q", err, tc.want)
			}
		})
	}
}

// TestOTLPSample replays the shipped export: vLLM's llm_request spans,
// P/D's pairs among them, batched as the Collector exports them.
func TestOTLPSample(t *testing.T) {
	reqs := drainAll(t, NewOTLP(openFile(t, "../traces/otlp-sample.jsonl"), "otlp-sample.jsonl"))
	checkInvariants(t, reqs)
	if len(reqs) != 300 {
		t.Errorf("%d requests, want the sample's 300", len(reqs))
	}
}

func FuzzOTLP(f *testing.F) {
	fuzzTrace(f, func(d []byte) sim.Source { return NewOTLP(bytes.NewReader(d), "f.json") },
		export(span("a", 5, promptKey, 3, outputKey, 4), span("b", 1, promptKey, 3, outputKey, 4), span("a", 2, promptKey, 3, outputKey, 9)),
		export(span("", 1e18, "gen_ai.usage.input_tokens", 3, "gen_ai.usage.output_tokens", 0))+"\n"+export(),
		`{"resourceSpans": [{"instrumentationLibrarySpans": [{"spans": [{"startTimeUnixNano": 1}]}]}]}`, "{", "")
}
