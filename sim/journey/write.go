package journey

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// event is one trace event (Chrome trace-event format).
type event struct {
	Name string      `json:"name"`
	Cat  string      `json:"cat,omitempty"`
	Ph   string      `json:"ph"`
	Ts   json.Number `json:"ts,omitempty"`  // µs, exact to the ns
	Dur  json.Number `json:"dur,omitempty"` // µs, "X" only
	Pid  int         `json:"pid"`
	Tid  int         `json:"tid"`
	S    string      `json:"s,omitempty"`  // instant scope
	ID   int         `json:"id,omitempty"` // flow arrow id, from 1
	Bp   string      `json:"bp,omitempty"` // flow binding point
	Args eventArgs   `json:"args"`
}

type eventArgs struct {
	Request   *int64   `json:"request,omitempty"`
	Value     *float64 `json:"value,omitempty"` // counters`
	Name      string   `json:"name,omitempty"`
	SortIndex *int     `json:"sort_index,omitempty"`
}

// category is the cat of every journey event; flow ends match on it.
const category = "journey"

// WriteJSON writes the recorded journeys as a Chrome trace-event JSON
// object, {"traceEvents":[...],"displayTimeUnit":"ms"}, one event per line:
// process and thread names first, then the events in time order. Spans are
// "X" events, instants "i" events of thread scope, and each flow a pair of
// "s" and "f" events (binding point "e") placed on the slices they join;
// every event but the metadata and an instance's own spans (lock-ups)
// carries args.request. Times are µs written
// exactly (ns resolution). The same recording writes the same bytes.
// Cost: O(n log n) in the recorded events.
func (r *Recorder) WriteJSON(w io.Writer) error {
	p := r.layout()
	enc := newEncoder(w)
	for _, e := range metadata(p.threads) {
		enc.write(&e)
	}
	fw := newFlowWriter(&p, enc)
	for i := range p.items {
		enc.write(itemEvent(&p.items[i], pidOf(p.items[i].track.Kind), p.tid[i]))
		fw.after(i)
	}
	for i := range r.counters {
		enc.write(r.counterEvent(&r.counters[i]))
	}
	return enc.close()
}

// counterEvent is a "C" event: one counter track per instance and name,
// in the instances' process.
func (r *Recorder) counterEvent(c *counter) *event {
	return &event{Name: r.trackName(c.track) + " · " + c.name, Cat: category, Ph: "C", Ts: micros(c.atNs),
		Pid: pidOf(c.track.Kind), Args: eventArgs{Value: &c.value}}
}

// flowWriter writes each flow's ends right after the slices they bind to,
// so that a viewer reading in time order finds that slice on top of its
// thread's stack. An "f" whose slice comes before its "s" waits for it.
type flowWriter struct {
	p       *plan
	enc     *encoder
	ends    [][]int // per item, the flow ends bound to it: 2·flow, +1 for the "f"
	startNs []int64 // per flow, the ts of its written "s", -1 before
	pending []bool  // per flow, an "f" waits for its "s"
}

func newFlowWriter(p *plan, enc *encoder) *flowWriter {
	fw := &flowWriter{p: p, enc: enc, ends: make([][]int, len(p.items)),
		startNs: make([]int64, len(p.from)), pending: make([]bool, len(p.from))}
	for k := range p.from {
		fw.startNs[k] = -1
		if p.from[k] >= 0 {
			fw.ends[p.from[k]] = append(fw.ends[p.from[k]], 2*k)
			fw.ends[p.to[k]] = append(fw.ends[p.to[k]], 2*k+1)
		}
	}
	return fw
}

// after writes the flow ends bound to item i.
func (fw *flowWriter) after(i int) {
	it := &fw.p.items[i]
	for _, end := range fw.ends[i] {
		k := end / 2
		switch {
		case end%2 == 0:
			fw.startNs[k] = it.startNs
			fw.enc.write(flowEvent("s", k, it.id, it.startNs, pidOf(it.track.Kind), fw.p.tid[i]))
			if fw.pending[k] {
				to := fw.p.to[k]
				fw.enc.write(flowEvent("f", k, it.id, it.startNs, pidOf(fw.p.items[to].track.Kind), fw.p.tid[to]))
			}
		case fw.startNs[k] >= 0:
			fw.enc.write(flowEvent("f", k, it.id, max(it.startNs, fw.startNs[k]), pidOf(it.track.Kind), fw.p.tid[i]))
		default:
			fw.pending[k] = true
		}
	}
}

// metadata names the processes and threads and fixes their order.
func metadata(threads []thread) []event {
	var out []event
	names := map[int]string{pidRouter: "router", pidInstances: "instances", pidLinks: "links"}
	for pid := pidRouter; pid <= pidLinks; pid++ {
		out = append(out, event{Name: "process_name", Ph: "M", Pid: pid, Args: eventArgs{Name: names[pid]}},
			event{Name: "process_sort_index", Ph: "M", Pid: pid, Args: eventArgs{SortIndex: &pid}})
	}
	for _, t := range threads {
		out = append(out, event{Name: "thread_name", Ph: "M", Pid: t.pid, Tid: t.tid, Args: eventArgs{Name: t.name}},
			event{Name: "thread_sort_index", Ph: "M", Pid: t.pid, Tid: t.tid, Args: eventArgs{SortIndex: &t.tid}})
	}
	return out
}

func itemEvent(it *item, pid, tid int) *event {
	e := &event{Name: it.name, Cat: category, Ph: "X", Ts: micros(it.startNs), Pid: pid, Tid: tid}
	if it.id != ownID {
		e.Args.Request = &it.id
	}
	if it.instant {
		e.Ph, e.S = "i", "t"
	} else {
		e.Dur = micros(it.endNs - it.startNs)
	}
	return e
}

// flowEvent is one end of flow k; the pair shares name, category and id.
func flowEvent(ph string, k int, id, atNs int64, pid, tid int) *event {
	e := &event{Name: "journey", Cat: category, Ph: ph, Ts: micros(atNs), Pid: pid, Tid: tid, ID: k + 1,
		Args: eventArgs{Request: &id}}
	if ph == "f" {
		e.Bp = "e"
	}
	return e
}

// micros writes ns as µs, exactly: 1234567 → "1234.567", 5000 → "5".
func micros(ns int64) json.Number {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	s := sign + strconv.FormatInt(ns/1000, 10)
	if frac := ns % 1000; frac != 0 {
		f := strconv.FormatInt(1000+frac, 10)[1:] // three digits
		s += "." + strings.TrimRight(f, "0")
	}
	return json.Number(s)
}

// encoder writes the events array, one event a line, and keeps the first
// error.
type encoder struct {
	bw    *bufio.Writer
	buf   bytes.Buffer
	enc   *json.Encoder
	first bool
	err   error
}

func newEncoder(w io.Writer) *encoder {
	e := &encoder{bw: bufio.NewWriterSize(w, 64<<10), first: true}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	e.bw.WriteString(`{"traceEvents":[` + "\n")
	return e
}

func (e *encoder) write(ev *event) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	if e.err = e.enc.Encode(ev); e.err != nil {
		return
	}
	if !e.first {
		e.bw.WriteString(",\n")
	}
	e.first = false
	e.bw.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
}

func (e *encoder) close() error {
	if e.err != nil {
		return e.err
	}
	e.bw.WriteString("\n" + `],"displayTimeUnit":"ms"}` + "\n")
	return e.bw.Flush()
}
