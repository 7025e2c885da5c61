package workload

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"strconv"
)

// otlpWindow is how many requests the OTLP reader holds to replay them in
// arrival order: an export's spans come in the order they ended, a long
// request's span that many requests after those that arrived with it.
// 262,144 requests hold a 10-minute request's span at 400 requests per
// second; held, they take some 40 MB.
const otlpWindow = 1 << 18

// otlpSpan is the part of a span the reader takes.
type otlpSpan struct {
	TraceID    string          `json:"traceId"`
	Start      json.RawMessage `json:"startTimeUnixNano"`
	Attributes []otlpAttribute `json:"attributes"`
}

// otlpAttribute is one key and its AnyValue.
type otlpAttribute struct {
	Key   string `json:"key"`
	Value struct {
		Int    json.RawMessage `json:"intValue"` // int64: a string in the protobuf JSON encoding, or a number
		Double json.RawMessage `json:"doubleValue"`
	} `json:"value"`
}

// addSpan files the span raw, at path on line: a request span joins the
// window; any other is passed over.
func (o *otlp) addSpan(raw json.RawMessage, path string, line int) error {
	var sp otlpSpan
	if err := json.Unmarshal(raw, &sp); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return o.errorf(line, path+"."+te.Field, "cannot use a JSON %s as %s", te.Value, jsonKind(te.Type))
		}
		return o.errorf(line, path, "want a span object, got %s", rawKind(raw))
	}
	prompt, ok, err := o.attribute(sp.Attributes, otlpPromptKeys, line, path)
	if err != nil || !ok {
		return err
	}
	output, ok, err := o.attribute(sp.Attributes, otlpOutputKeys, line, path)
	if err == nil && !ok {
		err = o.errorf(line, path+".attributes", "a request span (it has %s) without %s or %s",
			otlpPromptKeys[0], otlpOutputKeys[0], otlpOutputKeys[1])
	}
	if err != nil {
		return err
	}
	startNs, err := o.startNs(sp.Start, line, path)
	if err != nil {
		return err
	}
	o.spans++
	key := sp.TraceID + "/" + strconv.Itoa(prompt)
	if sp.TraceID == "" {
		key = "#" + strconv.Itoa(o.spans) // no trace: a request of its own
	}
	if problem := o.window.add(&pendingRequest{key: key, startNs: startNs, prompt: prompt, output: output, line: line, path: path}); problem != "" {
		return o.errorf(line, path, "%s", problem)
	}
	return nil
}

// attribute reads the first of keys the attributes hold, an integer.
func (o *otlp) attribute(attrs []otlpAttribute, keys [2]string, line int, path string) (int, bool, error) {
	for i, a := range attrs {
		if a.Key != keys[0] && a.Key != keys[1] {
			continue
		}
		field := path + ".attributes[" + strconv.Itoa(i) + "] " + a.Key
		v := a.Value.Int
		if len(v) == 0 {
			v = a.Value.Double
		}
		if len(v) == 0 {
			return 0, false, o.errorf(line, field, "want an intValue")
		}
		n, err := o.parseTokens(line, field, string(bytes.Trim(v, `"`)))
		return n, true, err
	}
	return 0, false, nil
}

// startNs reads a span's startTimeUnixNano.
func (o *otlp) startNs(raw json.RawMessage, line int, path string) (int64, error) {
	field := path + ".startTimeUnixNano"
	if len(raw) == 0 || string(raw) == "null" {
		return 0, o.errorf(line, field, "missing: a request span's start is its arrival")
	}
	v := string(bytes.Trim(raw, `"`))
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ns < 0 || ns > maxTraceSpanNs {
		return 0, o.errorf(line, field, "%s is not a time in ns since 1970 within 100 years", quote(v))
	}
	return ns, nil
}

// pendingRequest is a request the window holds: its key (trace and
// prompt length), arrival, lengths, and where its first span is.
type pendingRequest struct {
	key            string
	startNs        int64
	prompt, output int
	line           int
	path           string
	seq            int // the order read, which breaks ties
	index          int // in the heap
}

// arrivalWindow holds up to size requests in arrival order, merging the
// spans of one request, and remembers the last size keys it let go, so
// that a span coming too late is an error rather than a request twice.
type arrivalWindow struct {
	size    int
	pending arrivalHeap
	byKey   map[string]*pendingRequest
	recent  []string // keys let go, a ring
	gone    map[string]bool
	next    int // the ring's next slot
	lastNs  int64
	popped  bool
	seq     int
}

func newArrivalWindow(size int) *arrivalWindow {
	return &arrivalWindow{size: size, byKey: map[string]*pendingRequest{}, gone: map[string]bool{}}
}

// add files p, merged with a pending request of its key; a non-empty
// result says why it cannot be.
func (w *arrivalWindow) add(p *pendingRequest) string {
	switch {
	case w.popped && p.startNs < w.lastNs:
		return "starts before a request already replayed: the export is out of arrival order by more than " +
			strconv.Itoa(w.size) + " requests (sort its spans by startTimeUnixNano)"
	case w.gone[p.key]:
		return "a span of a request already replayed (trace and prompt length): its spans lie more than " +
			strconv.Itoa(w.size) + " requests apart"
	}
	if q := w.byKey[p.key]; q != nil {
		if p.startNs < q.startNs {
			q.startNs, q.line, q.path = p.startNs, p.line, p.path
			heap.Fix(&w.pending, q.index)
		}
		q.output = max(q.output, p.output)
		return ""
	}
	p.seq = w.seq
	w.seq++
	w.byKey[p.key] = p
	heap.Push(&w.pending, p)
	return ""
}

// ready reports whether the window is full: its earliest request may go.
func (w *arrivalWindow) ready() bool { return len(w.pending) > w.size }

// pop lets the earliest request go; false when none is held.
func (w *arrivalWindow) pop() (*pendingRequest, bool) {
	if len(w.pending) == 0 {
		return nil, false
	}
	p := heap.Pop(&w.pending).(*pendingRequest)
	delete(w.byKey, p.key)
	if len(w.recent) < w.size {
		w.recent = append(w.recent, p.key)
	} else {
		delete(w.gone, w.recent[w.next])
		w.recent[w.next] = p.key
		w.next = (w.next + 1) % w.size
	}
	w.gone[p.key] = true
	w.lastNs, w.popped = p.startNs, true
	return p, true
}

// arrivalHeap orders pending requests by arrival, then by reading order.
type arrivalHeap []*pendingRequest

func (h arrivalHeap) Len() int { return len(h) }
func (h arrivalHeap) Less(i, j int) bool {
	return h[i].startNs < h[j].startNs || h[i].startNs == h[j].startNs && h[i].seq < h[j].seq
}
func (h arrivalHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

// Push implements heap.Interface.
func (h *arrivalHeap) Push(x any) {
	p := x.(*pendingRequest)
	p.index = len(*h)
	*h = append(*h, p)
}

// Pop implements heap.Interface.
func (h *arrivalHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}
