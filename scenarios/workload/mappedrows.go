package workload

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"handoff/sim"
)

// NewMappedCSV streams a generic CSV trace with a header row: t.Columns
// names the header's columns that hold each row's timestamp (in
// t.TimestampUnit), prompt and output tokens, and optionally its session,
// turn, prefix block ids (a list in one cell: "[3 4 5]", "3;4;5"; each
// id t.BlockTokens tokens, the last holding the rest up to that many) and
// traffic class (a name of t.ClassNames); other columns are ignored. Rows must be sorted by timestamp; ArrivalNs
// counts from the first row. With a session column, a row's prompt
// begins with its session's previous row's prompt and answer, when it
// holds that many tokens (input_tokens counts the whole prompt, as a
// serving log records it); with a turn column too, a session's turns
// must follow each other. Zero lengths become 1 (counted by Clamped). A
// mapped column missing from the header, or a bad value, is a *ParseError
// naming the line and the column. Cost per row: encoding/csv's one
// allocation, plus a session's two segments.
func NewMappedCSV(r io.Reader, file string, t Trace) sim.Source {
	m := newMappedTrace(file, t)
	cr := csv.NewReader(newLineCapped(r, file))
	cr.ReuseRecord, cr.FieldsPerRecord, cr.TrimLeadingSpace = true, -1, true
	m.rows = &csvRows{m: m, cr: cr}
	return m
}

// NewMappedJSONL streams a generic JSONL trace, one JSON object per line,
// as NewMappedCSV reads a CSV one, t.Columns naming keys: a number or a
// string of one for lengths, times and turns, a string or a number for
// the session, a list of non-negative integers for the prefix ids. Blank
// lines are skipped.
func NewMappedJSONL(r io.Reader, file string, t Trace) sim.Source {
	m := newMappedTrace(file, t)
	m.rows = &jsonlRows{m: m, jsonLines: newJSONLines(r)}
	return m
}

func newMappedTrace(file string, t Trace) *mappedTrace {
	if t.Columns == nil {
		panic("workload: a generic trace without columns") // Validate requires them
	}
	return &mappedTrace{sequencer: sequencer{file: file}, spec: t, sessions: map[string]*mappedSession{}}
}

// mapped lists the trace's mapped columns with the scenario field that
// names each; unmapped ones are "".
func (m *mappedTrace) mapped() [7][2]string {
	c := m.spec.Columns
	return [7][2]string{{c.Timestamp, "timestamp"}, {c.InputTokens, "input_tokens"}, {c.OutputTokens, "output_tokens"},
		{c.Session, "session"}, {c.Turn, "turn"}, {c.PrefixIDs, "prefix_ids"}, {c.Class, "class"}}
}

// fill parses a row's seven values (get returns one by its index in
// mapped, and whether the row has it) into row.
func (m *mappedTrace) fill(row *mappedRow, line int, get func(k int) (string, bool)) error {
	cols := m.mapped()
	vals := [7]string{}
	for k, c := range cols {
		if c[0] == "" {
			continue
		}
		v, ok := get(k)
		if !ok {
			return m.errorf(line, c[0], "missing (columns.%s names it)", c[1])
		}
		vals[k] = v
	}
	*row = mappedRow{line: line, session: vals[3], prefix: row.prefix[:0]}
	var err error
	if row.tsNs, err = m.parseTime(line, vals[0]); err != nil {
		return err
	}
	if row.input, err = m.parseTokens(line, cols[1][0], vals[1]); err != nil {
		return err
	}
	if row.output, err = m.parseTokens(line, cols[2][0], vals[2]); err != nil {
		return err
	}
	if cols[4][0] != "" && strings.TrimSpace(vals[4]) != "" { // a blank turn: not known
		if row.turn, err = m.parseTokens(line, cols[4][0], vals[4]); err == nil && row.turn == 0 {
			err = m.errorf(line, cols[4][0], "turns count from 1")
		}
	}
	if err == nil && cols[6][0] != "" {
		row.class, err = m.parseClass(line, vals[6])
	}
	return err
}

// csvRows reads a generic CSV trace's rows.
type csvRows struct {
	m     *mappedTrace
	cr    *csv.Reader
	cols  [7]int // each mapped column's index in the header; -1 unmapped
	ready bool   // the header is read
}

func (c *csvRows) read(row *mappedRow) (bool, error) {
	if !c.ready {
		if err := c.header(); err != nil {
			return false, err
		}
		c.ready = true
	}
	rec, err := c.cr.Read()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, c.m.csvError(err)
	}
	line, _ := c.cr.FieldPos(0)
	err = c.m.fill(row, line, func(k int) (string, bool) {
		if j := c.cols[k]; j < len(rec) {
			return rec[j], true
		}
		return "", false
	})
	if err == nil && c.cols[5] >= 0 {
		row.prefix, err = c.ids(row.prefix, line, rec[c.cols[5]])
	}
	return true, err
}

// header finds the mapped columns in the header row.
func (c *csvRows) header() error {
	h, err := c.cr.Read()
	if err == io.EOF {
		return c.m.errorf(0, "", "empty file: want a header row naming the mapped columns")
	}
	if err != nil {
		return c.m.csvError(err)
	}
	for k, col := range c.m.mapped() {
		c.cols[k] = -1
		if col[0] == "" {
			continue
		}
		idx, err := c.m.columns(h, col[0])
		if err != nil {
			return c.m.errorf(1, col[0], "no such column (columns.%s names it) in the header %s",
				col[1], quote(strings.Join(h, ",")))
		}
		c.cols[k] = idx[0]
	}
	return nil
}

// ids parses a cell of prefix block ids: a list separated by spaces,
// commas, semicolons or bars, optionally in brackets.
func (c *csvRows) ids(dst []uint64, line int, cell string) ([]uint64, error) {
	field := c.m.spec.Columns.PrefixIDs
	cell = strings.Trim(strings.TrimSpace(cell), "[]")
	for _, f := range strings.FieldsFunc(cell, func(r rune) bool { return strings.ContainsRune(" ,;|\t", r) }) {
		id, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, c.m.errorf(line, field, "%s is not a block id (a non-negative integer)", quote(f))
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// jsonlRows reads a generic JSONL trace's rows.
type jsonlRows struct {
	m *mappedTrace
	jsonLines
	obj map[string]json.RawMessage
}

func (j *jsonlRows) read(row *mappedRow) (bool, error) {
	b, err := j.next(j.m.file)
	if b == nil {
		return false, err
	}
	return true, j.parse(row, b)
}

// parse reads one line's object into row.
func (j *jsonlRows) parse(row *mappedRow, b []byte) error {
	clear(j.obj)
	if err := json.Unmarshal(b, &j.obj); err != nil {
		return j.m.jsonError(j.line, err)
	}
	if j.obj == nil {
		return j.m.errorf(j.line, "", "null: want an object")
	}
	cols := j.m.mapped()
	err := j.m.fill(row, j.line, func(k int) (string, bool) {
		raw, ok := j.obj[cols[k][0]]
		if !ok || k == 5 {
			return "", ok
		}
		var s string
		if json.Unmarshal(raw, &s) == nil || string(raw) == "null" { // null: blank
			return s, true
		}
		return string(raw), true
	})
	if err == nil && cols[5][0] != "" {
		if err = json.Unmarshal(j.obj[cols[5][0]], &row.prefix); err != nil {
			err = j.m.errorf(j.line, cols[5][0], "want a list of block ids (non-negative integers)")
		}
	}
	return err
}
