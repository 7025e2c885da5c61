package workload

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
)

// csvSessions reads a session trace's CSV rows.
type csvSessions struct {
	sequencer
	cr   *csv.Reader
	cols []int // session_id, turn, timestamp, input_tokens, output_tokens, think_ms (-1: absent)
}

var sessionColumns = []string{"session_id", "turn", "timestamp", "input_tokens", "output_tokens"}

func newCSVSessions(r io.Reader, file string) *csvSessions {
	cr := csv.NewReader(newLineCapped(r, file))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	return &csvSessions{sequencer: sequencer{file: file}, cr: cr}
}

func (c *csvSessions) read(row *sessionRow) (bool, error) {
	if c.cols == nil {
		if err := c.header(); err != nil {
			return false, err
		}
	}
	rec, err := c.cr.Read()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, c.csvError(err)
	}
	line, _ := c.cr.FieldPos(0)
	return true, c.row(row, rec, line)
}

func (c *csvSessions) header() error {
	h, err := c.cr.Read()
	if err == io.EOF {
		return c.errorf(1, "header", "empty file: want a header with %s", strings.Join(sessionColumns, ","))
	}
	if err != nil {
		return c.csvError(err)
	}
	if c.cols, err = c.columns(h, sessionColumns...); err != nil {
		return err
	}
	think := -1
	if idx, err := c.columns(h, "think_ms"); err == nil {
		think = idx[0]
	}
	c.cols = append(c.cols, think)
	return nil
}

func (c *csvSessions) row(row *sessionRow, rec []string, line int) error {
	field := func(k int) string {
		if j := c.cols[k]; j >= 0 && j < len(rec) {
			return strings.TrimSpace(rec[j])
		}
		return ""
	}
	*row = sessionRow{line: line, id: field(0)}
	if row.id == "" {
		return c.errorf(line, "session_id", "missing")
	}
	turn, err := strconv.Atoi(field(1))
	if err != nil || turn < 1 || turn > maxTurns {
		return c.errorf(line, "turn", "%s is not a turn in [1, %d]", quote(field(1)), maxTurns)
	}
	row.turn = turn
	if row.input, err = c.parseTokens(line, "input_tokens", field(3)); err != nil {
		return err
	}
	if row.output, err = c.parseTokens(line, "output_tokens", field(4)); err != nil {
		return err
	}
	if turn == 1 {
		if row.startNs, err = c.millis(line, "timestamp", field(2), false); err != nil {
			return err
		}
	}
	row.thinkNs, err = c.millis(line, "think_ms", field(5), true)
	return err
}

// millis parses a time in ms (≥ 0 for think times) into ns; blank is 0
// when optional.
func (s *sequencer) millis(line int, field, v string, optional bool) (int64, error) {
	if v == "" && optional {
		return 0, nil
	}
	ms, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(ms):
		return 0, s.errorf(line, field, "%s is not a time in ms", quote(v))
	case optional && ms < 0:
		return 0, s.errorf(line, field, "%s is negative", v)
	case math.Abs(ms*1e6) > maxTraceSpanNs:
		return 0, s.errorf(line, field, "%s ms is out of range", v)
	}
	return int64(math.Round(ms * 1e6)), nil
}

// jsonlSessions reads a session trace's JSONL rows.
type jsonlSessions struct {
	sequencer
	jsonLines
}

type jsonSessionRow struct {
	SessionID    json.RawMessage `json:"session_id"`
	Turn         *int            `json:"turn"`
	Timestamp    *float64        `json:"timestamp"`
	InputTokens  *int            `json:"input_tokens"`
	OutputTokens *int            `json:"output_tokens"`
	ThinkMs      *float64        `json:"think_ms"`
}

func newJSONLSessions(r io.Reader, file string) *jsonlSessions {
	return &jsonlSessions{sequencer: sequencer{file: file}, jsonLines: newJSONLines(r)}
}

func (j *jsonlSessions) read(row *sessionRow) (bool, error) {
	b, err := j.next(j.file)
	if b == nil {
		return false, err
	}
	return true, j.parse(row, b)
}

func (j *jsonlSessions) parse(row *sessionRow, b []byte) error {
	var v jsonSessionRow
	if err := json.Unmarshal(b, &v); err != nil {
		return j.jsonError(j.line, err)
	}
	*row = sessionRow{line: j.line, id: strings.Trim(string(v.SessionID), `"`)}
	switch {
	case len(v.SessionID) == 0 || row.id == "" || row.id == "null":
		return j.errorf(j.line, "session_id", "missing")
	case v.Turn == nil || *v.Turn < 1 || *v.Turn > maxTurns:
		return j.errorf(j.line, "turn", "missing, or not in [1, %d]", maxTurns)
	case v.InputTokens == nil || *v.InputTokens < 0 || *v.InputTokens > maxTokens:
		return j.errorf(j.line, "input_tokens", "missing, negative or over %d", maxTokens)
	case v.OutputTokens == nil || *v.OutputTokens < 0 || *v.OutputTokens > maxTokens:
		return j.errorf(j.line, "output_tokens", "missing, negative or over %d", maxTokens)
	case *v.Turn == 1 && v.Timestamp == nil:
		return j.errorf(j.line, "timestamp", "missing on turn 1 (the session's start)")
	}
	row.turn, row.input, row.output = *v.Turn, *v.InputTokens, *v.OutputTokens
	var err error
	if row.turn == 1 {
		if row.startNs, err = j.millis(j.line, "timestamp", strconv.FormatFloat(*v.Timestamp, 'g', -1, 64), false); err != nil {
			return err
		}
	}
	if v.ThinkMs != nil {
		row.thinkNs, err = j.millis(j.line, "think_ms", strconv.FormatFloat(*v.ThinkMs, 'g', -1, 64), true)
	}
	return err
}
