package workload

import (
	"encoding/json"
	"io"
	"strconv"

	"handoff/sim"
)

// FormatOTLP is OpenTelemetry spans exported as OTLP JSON (NewOTLP).
const FormatOTLP = "otlp"

// The span attributes a request's lengths come from. vLLM sets the
// first of each pair on its llm_request span (SpanAttributes in
// vllm/tracing.py, set by OutputProcessor.do_tracing in
// vllm/v1/engine/output_processor.py): the prompt's length and the tokens
// generated. The OpenTelemetry semantic conventions for generative AI
// spans have since renamed them to the second (gen_ai.usage.input_tokens,
// gen_ai.usage.output_tokens; docs/gen-ai/gen-ai-spans.md in
// open-telemetry/semantic-conventions, where the older names are
// deprecated), which other instrumentations set; either is read.
var (
	otlpPromptKeys = [2]string{"gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens"}
	otlpOutputKeys = [2]string{"gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens"}
)

// NewOTLP streams OpenTelemetry spans exported as OTLP JSON — the
// protobuf JSON encoding of ExportTraceServiceRequest, one document or one
// per line as the OpenTelemetry Collector's file exporter writes them:
// {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]} — as vLLM's
// tracing (--otlp-traces-endpoint) and llm-d's, which leave the usage to
// vLLM's spans, record requests. A span with a prompt-length attribute
// (otlpPromptKeys) is a request; it must carry an output-length one
// (otlpOutputKeys) too. The request arrives at the span's
// startTimeUnixNano: vLLM starts its llm_request span at the request's
// arrival time. gen_ai.request.max_tokens (a cap, not what was generated)
// and the latency attributes (gen_ai.latency.time_in_queue,
// time_to_first_token, e2e: outcomes of the fleet that served the trace,
// which the simulation computes for its own) are not read. Spans of one
// trace (traceId) with the same prompt length are one request served in
// parts — P/D's prefill and decode, each vLLM instance recording a span —
// arriving at the earlier start, its output the longer. Spans are
// exported when they end, not in start order, so requests are replayed
// in arrival order through a window of otlpWindow requests: an export
// out of order by more than that is an error that says so. ArrivalNs
// counts from the first request; zero lengths become 1 (counted by
// Clamped). A file without any request span, a request span without its
// output attribute or a bad value is a *ParseError naming the line and the
// span's JSON path. Cost: O(otlpWindow) memory at most, a few allocations
// per span.
func NewOTLP(r io.Reader, file string) sim.Source {
	s := newJSONStream(r, file)
	return &otlp{jsonStream: s, window: newArrivalWindow(otlpWindow)}
}

type otlp struct {
	*jsonStream
	stack  []otlpFrame
	window *arrivalWindow
	spans  int // request spans read
	docs   int // documents begun
	eof    bool
}

// otlpFrame is an object or list the reader is inside: level 0 is the
// document (and its resourceSpans list), 1 a resource's (scopeSpans), 2 a
// scope's (spans).
type otlpFrame struct {
	list  bool
	level int
	index int // the next element's, in a list
	path  string
}

// otlpLists are the keys of each level's list of the next level's
// objects; instrumentationLibrarySpans is scopeSpans' name before OTLP
// 0.15.
var otlpLists = [3][]string{{"resourceSpans"}, {"scopeSpans", "instrumentationLibrarySpans"}, {"spans"}}

// Next implements sim.Source.
func (o *otlp) Next(r *sim.Request) (bool, error) {
	if o.err != nil || o.done {
		return false, o.err
	}
	for !o.eof && !o.window.ready() {
		if err := o.readSpan(); err != nil {
			return o.fail(err)
		}
	}
	if o.eof && o.spans == 0 {
		return o.fail(o.errorf(0, "", "no span carries %s or %s: not an export of vLLM's request spans",
			otlpPromptKeys[0], otlpPromptKeys[1]))
	}
	p, ok := o.window.pop()
	if !ok {
		o.done = true
		return false, nil
	}
	if err := o.emit(r, p.line, p.path, p.startNs, p.prompt, p.output); err != nil {
		return o.fail(err)
	}
	return true, nil
}

// readSpan reads on to the next span and files it (or to the end).
func (o *otlp) readSpan() error {
	for {
		var raw json.RawMessage
		path, line, ok, err := o.step(&raw)
		switch {
		case err != nil:
			return err
		case o.eof:
			return nil
		case ok:
			return o.addSpan(raw, path, line)
		}
	}
}

// step takes one step through the export: into or out of an object or a
// list, past a key the reader does not read, or onto a span, which it
// decodes into raw (ok true).
func (o *otlp) step(raw *json.RawMessage) (path string, line int, ok bool, err error) {
	if len(o.stack) == 0 {
		return "", 0, false, o.document()
	}
	f := &o.stack[len(o.stack)-1]
	if !o.dec.More() {
		_, err := o.dec.Token() // the closing bracket
		o.stack = o.stack[:len(o.stack)-1]
		return "", 0, false, o.streamOK(err)
	}
	if f.list {
		path := f.path + "[" + strconv.Itoa(f.index) + "]"
		f.index++
		if f.level == 2 {
			line, err := o.value(raw)
			return path, line, err == nil, err
		}
		return "", 0, false, o.enter(path, f.level+1, false)
	}
	return "", 0, false, o.key(f)
}

// document starts the next top-level document, or notes the end.
func (o *otlp) document() error {
	const what = "an OTLP JSON export (an object with resourceSpans)"
	tok, err := o.dec.Token()
	switch {
	case err == io.EOF && o.docs > 0:
		o.eof = true
		return nil
	case err == io.EOF:
		return o.errorf(0, "", "empty file: want %s", what)
	case err != nil:
		return o.notJSON(err, what)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return o.errorf(o.line(), "", "want %s, got %s", what, tokenKind(tok))
	}
	o.docs++
	o.stack = append(o.stack, otlpFrame{})
	return nil
}

// key reads an object's next key: the list of the next level's objects
// is entered, anything else skipped.
func (o *otlp) key(f *otlpFrame) error {
	tok, err := o.dec.Token()
	if err != nil {
		return o.streamError(err)
	}
	key, _ := tok.(string)
	for _, want := range otlpLists[f.level] {
		if key == want {
			return o.enter(jsonPath(f.path, key), f.level, true)
		}
	}
	var skip json.RawMessage
	_, err = o.value(&skip)
	return err
}

// enter reads the opening bracket of an object or a list at path.
func (o *otlp) enter(path string, level int, list bool) error {
	want, what := json.Delim('{'), "an object"
	if list {
		want, what = '[', "a list"
	}
	tok, err := o.dec.Token()
	if err != nil {
		return o.streamError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return o.errorf(o.line(), path, "want %s, got %s", what, tokenKind(tok))
	}
	o.stack = append(o.stack, otlpFrame{list: list, level: level, path: path})
	return nil
}

// streamOK converts a stream error, nil staying nil.
func (o *otlp) streamOK(err error) error {
	if err != nil {
		return o.streamError(err)
	}
	return nil
}

// jsonPath appends a key to a JSON path.
func jsonPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
