package workload

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"handoff/models/kv"
	"handoff/sim"
)

// The generic traces: a CSV file with a header, or JSONL, whose columns
// (keys) the scenario maps to what a request needs.
const (
	FormatCSV   = "csv"   // NewMappedCSV
	FormatJSONL = "jsonl" // NewMappedJSONL
)

// Columns names a generic trace's columns (a CSV header's names or JSONL
// keys): Timestamp, InputTokens and OutputTokens are required; Session
// (and Turn, which needs it) makes each row's prompt begin with its
// session's previous prompt and answer; PrefixIDs holds a row's prefix
// block ids, each BlockTokens tokens (as Mooncake's hash_ids); Class holds
// a row's traffic class, by name (one of Trace.ClassNames).
type Columns struct {
	Timestamp    string `yaml:"timestamp"`
	InputTokens  string `yaml:"input_tokens"`
	OutputTokens string `yaml:"output_tokens"`
	Session      string `yaml:"session,omitempty"`
	Turn         string `yaml:"turn,omitempty"`
	PrefixIDs    string `yaml:"prefix_ids,omitempty"`
	Class        string `yaml:"class,omitempty"`
}

// timestampUnits maps a generic trace's timestamp_unit to ns per unit;
// datetime (0) is a date and time as Azure's traces write them.
var timestampUnits = map[string]float64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1, "datetime": 0}

// TimestampUnits returns the timestamp units a generic trace may name, in
// the order errors list them.
func TimestampUnits() []string { return []string{"s", "ms", "us", "ns", "datetime"} }

// mappedOptions are the trace fields the generic formats take.
var mappedOptions = []string{"columns", "timestamp_unit", "block_tokens"}

// maxOpenSessions bounds the sessions a generic trace keeps the history
// of (each holds two prefix segments per turn).
const maxOpenSessions = 1 << 20

// Segment IDs of a generic trace's session content (kinds 6 and 7, after
// the sessions'): each row's new input and its answer, by request ID.
const (
	segMappedInput  uint64 = 6 << segKindShift // | request ID
	segMappedOutput uint64 = 7 << segKindShift // | request ID
)

// checkMapped validates a generic trace's mapping.
func checkMapped(t Trace) error {
	c := t.Columns
	switch {
	case c == nil:
		return fieldErr("columns", "required: name the columns, e.g. {timestamp: ts, input_tokens: prompt_len, output_tokens: output_len}")
	case c.Timestamp == "" || c.InputTokens == "" || c.OutputTokens == "":
		return fieldErr("columns", "timestamp, input_tokens and output_tokens are required")
	case t.TimestampUnit == "":
		return fieldErr("timestamp_unit", "required: one of %s", strings.Join(TimestampUnits(), ", "))
	case !slices.Contains(TimestampUnits(), t.TimestampUnit):
		return fieldErr("timestamp_unit", "%q is not one of %s", t.TimestampUnit, strings.Join(TimestampUnits(), ", "))
	case c.Turn != "" && c.Session == "":
		return fieldErr("columns.turn", "needs columns.session: a turn counts within a session")
	case c.Session != "" && c.PrefixIDs != "":
		return fieldErr("columns.prefix_ids", "give session or prefix_ids, not both: each makes the prompt's prefix")
	case (c.PrefixIDs != "") != (t.BlockTokens > 0):
		return fieldErr("block_tokens", "set with columns.prefix_ids, and only then: the tokens each id stands for (Mooncake's 512)")
	case t.BlockTokens < 0 || t.BlockTokens > maxTokens:
		return fieldErr("block_tokens", "must be in [1, %d], got %d", maxTokens, t.BlockTokens)
	case c.Class != "" && len(t.ClassNames) == 0:
		return fieldErr("columns.class", "needs workload.classes: the column names each row's class")
	}
	return nil
}

// mappedRow is one row of a generic trace.
type mappedRow struct {
	line          int
	tsNs          int64
	input, output int
	session       string // "" without a session column
	turn          int    // 0 without a turn column
	class         uint8  // 0 without a class column
	prefix        []uint64
}

// rowSource yields a generic trace's rows in file order.
type rowSource interface {
	read(row *mappedRow) (bool, error)
}

// mappedTrace turns a generic trace's rows into requests.
type mappedTrace struct {
	sequencer
	rows     rowSource
	spec     Trace
	row      mappedRow
	sessions map[string]*mappedSession
}

// mappedSession is what a session's next row repeats: the last row's
// prompt segments and answer, tok tokens, and the last turn.
type mappedSession struct {
	chain []kv.Segment
	tok   int
	turn  int
}

// Next implements sim.Source.
func (m *mappedTrace) Next(r *sim.Request) (bool, error) {
	if m.err != nil || m.done {
		return false, m.err
	}
	ok, err := m.rows.read(&m.row)
	if err != nil {
		return m.fail(err)
	}
	if !ok {
		m.done = true
		return false, nil
	}
	row := &m.row
	if err := m.emit(r, row.line, m.spec.Columns.Timestamp, row.tsNs, row.input, row.output); err != nil {
		return m.fail(err)
	}
	if err := m.prefix(r, row); err != nil {
		return m.fail(err)
	}
	r.Class = row.class
	return true, nil
}

// parseClass finds a row's class among the workload's by its name.
func (m *mappedTrace) parseClass(line int, v string) (uint8, error) {
	v = strings.TrimSpace(v)
	if k := slices.Index(m.spec.ClassNames, v); k >= 0 {
		return uint8(k), nil
	}
	return 0, m.errorf(line, m.spec.Columns.Class, "%s is not a class of workload.classes (%s)",
		quote(v), strings.Join(m.spec.ClassNames, ", "))
}

// prefix gives r its prompt's content: the row's block ids, or its
// session's history.
func (m *mappedTrace) prefix(r *sim.Request, row *mappedRow) error {
	switch {
	case len(row.prefix) > 0:
		segs, ok := blockSegments(row.prefix, r.PromptTokens, m.spec.BlockTokens)
		if !ok {
			return m.errorf(row.line, m.spec.Columns.PrefixIDs, "%d blocks of %d tokens need %s > %d, got %d",
				len(row.prefix), m.spec.BlockTokens, m.spec.Columns.InputTokens, m.spec.BlockTokens*(len(row.prefix)-1), r.PromptTokens)
		}
		r.Prefix = segs
	case row.session != "": // a blank session cell: a request of no session
		return m.history(r, row)
	}
	return nil
}

// history makes r's prompt its session's last prompt and answer (when r's
// prompt holds them: a client that resent less has no shared prefix)
// followed by its new input, all named segments, and names its answer,
// which the session's next row repeats.
func (m *mappedTrace) history(r *sim.Request, row *mappedRow) error {
	s := m.sessions[row.session]
	switch {
	case s == nil && len(m.sessions) >= maxOpenSessions:
		return m.errorf(row.line, m.spec.Columns.Session, "more than %d sessions: handoff keeps the history of at most that many", maxOpenSessions)
	case s == nil:
		s = &mappedSession{}
		m.sessions[row.session] = s
	case row.turn > 0 && row.turn != s.turn+1:
		return m.errorf(row.line, m.spec.Columns.Turn, "turn %d of session %s follows its turn %d: a session's rows are in turn order",
			row.turn, quote(row.session), s.turn)
	}
	if s.tok > r.PromptTokens {
		s.chain, s.tok = nil, 0 // earlier requests' prefixes alias the old chain: never write into it
	}
	if fresh := r.PromptTokens - s.tok; fresh > 0 {
		s.chain = append(s.chain, kv.Segment{ID: segMappedInput | uint64(r.ID), Tokens: fresh})
	}
	n := len(s.chain)
	r.Prefix = s.chain[:n:n]
	r.Output = kv.Segment{ID: segMappedOutput | uint64(r.ID), Tokens: r.OutputTokens}
	s.chain, s.tok = append(s.chain, r.Output), r.PromptTokens+r.OutputTokens
	s.turn = max(row.turn, s.turn+1)
	return nil
}

// parseTime parses a generic trace's timestamp in its unit into ns: a
// decimal number (an integer is read exactly, so epoch nanoseconds keep
// every digit), or for datetime a date and time.
func (m *mappedTrace) parseTime(line int, v string) (int64, error) {
	field, unit := m.spec.Columns.Timestamp, m.spec.TimestampUnit
	v = strings.TrimSpace(v)
	if unit == "datetime" {
		ns, ok := parseDateTime(v)
		if !ok {
			return 0, m.errorf(line, field, `%s is not a datetime like "2024-05-10 00:00:00.004" (timestamp_unit datetime)`, quote(v))
		}
		return ns, nil
	}
	scale := timestampUnits[unit]
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && math.Abs(float64(n))*scale <= maxTraceSpanNs {
		return n * int64(scale), nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f*scale) > maxTraceSpanNs {
		return 0, m.errorf(line, field, "%s is not a time in %s within 100 years of 0", quote(v), unit)
	}
	return int64(math.Round(f * scale)), nil
}

// blockSegments turns block ids into prompt segments covering inputLen
// tokens: each id names blockTokens tokens, the last at most that many
// (the rest of the prompt is unique to it). False when the ids need more
// tokens than the prompt has (inputLen ≤ blockTokens·(n−1)).
func blockSegments(ids []uint64, inputLen, blockTokens int) ([]kv.Segment, bool) {
	n := len(ids)
	if n == 0 {
		return nil, true
	}
	if n > maxTokens/blockTokens || inputLen <= blockTokens*(n-1) {
		return nil, false
	}
	prefix := make([]kv.Segment, n)
	for i, id := range ids {
		prefix[i] = kv.Segment{ID: id, Tokens: blockTokens}
	}
	prefix[n-1].Tokens = min(inputLen-blockTokens*(n-1), blockTokens)
	return prefix, true
}
