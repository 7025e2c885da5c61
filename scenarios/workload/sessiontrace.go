package workload

import (
	"bufio"
	"bytes"
	"io"

	"handoff/sim"
)

// FormatSessions is the generic multi-turn trace (NewSessionTrace).
const FormatSessions = "sessions"

// sessionRow is one turn as a session trace states it.
type sessionRow struct {
	line          int
	id            string // the session, as the trace names it
	turn          int
	startNs       int64 // timestamp: the session's start (read on turn 1 only)
	input, output int   // the turn's new input, its output
	thinkNs       int64 // before the turn, after the previous one ended
}

// rowReader yields a session trace's rows in file order.
type rowReader interface {
	read(row *sessionRow) (bool, error)
}

// NewSessionTrace streams a multi-turn trace, CSV with a header or JSONL
// (told apart by the first non-blank byte: '{' is JSONL). Each row is one
// turn: session_id, turn (from 1), timestamp (ms, the session's start: read
// on turn 1, ignored — and may be blank — on later turns), input_tokens
// (the turn's new input), output_tokens (zero lengths become 1, counted by
// Clamped), and optionally think_ms (the
// user's or tool's time between the end of the previous turn and this one;
// 0 when absent). A session's rows are contiguous and in turn order, and
// sessions are in order of their start; ArrivalNs counts from the first
// session's start. Turn k's prompt is the conversation so far — every
// earlier turn's input and output — plus its own input, as in
// NewSessions. A row out of that order, a negative length or think time is
// a *ParseError naming the line. limit > 0 stops after that many sessions.
// Cost: O(turns) per session in progress; the file is streamed.
func NewSessionTrace(r io.Reader, file string, limit int) sim.SessionSource {
	br := bufio.NewReaderSize(r, 64<<10)
	var rows rowReader
	if firstByte(br) == '{' {
		rows = newJSONLSessions(br, file)
	} else {
		rows = newCSVSessions(br, file)
	}
	return &sessionTrace{sequencer: sequencer{file: file}, rows: rows, limit: limit}
}

// firstByte returns the first non-blank byte br holds without consuming
// it, or 0.
func firstByte(br *bufio.Reader) byte {
	for n := 1; n <= 4096; n *= 2 {
		b, err := br.Peek(n)
		if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 {
			return t[0]
		}
		if err != nil {
			return 0
		}
	}
	return 0
}

type sessionTrace struct {
	sequencer
	sessionBook
	rows    rowReader
	ahead   sessionRow // the first row of the next session, when have
	have    bool
	started int32
	limit   int
	startNs int64 // the session being started, since the first's start
}

// Next implements sim.Source: the next session's first turn.
func (s *sessionTrace) Next(r *sim.Request) (bool, error) {
	if s.err != nil || s.done {
		return false, s.err
	}
	if s.limit > 0 && int(s.started) >= s.limit || !s.have && !s.readAhead() {
		s.done = true
		return false, s.err
	}
	p, err := s.readSession()
	if err != nil {
		return s.fail(err)
	}
	s.start(p, r)
	r.ArrivalNs = s.startNs
	return true, nil
}

// readAhead reads the next row into s.ahead; false at the end or on an
// error (s.err).
func (s *sessionTrace) readAhead() bool {
	ok, err := s.rows.read(&s.ahead)
	s.have = ok && err == nil
	s.err = err
	return s.have
}

// checkStart checks that the session s.ahead begins starts no earlier
// than the one before, and sets s.startNs.
func (s *sessionTrace) checkStart() error {
	var r sim.Request
	if err := s.emit(&r, s.ahead.line, "timestamp", s.ahead.startNs, 1, 1); err != nil {
		return err
	}
	s.startNs = s.ahead.startNs - s.firstNs
	return nil
}

// clamp raises a zero length to 1, counting it in *count (see Clamped).
func clamp(n int, count *int) int {
	if n == 0 {
		*count++
	}
	return max(n, 1)
}

// readSession reads the session s.ahead begins: its rows up to the next
// session's first, which it leaves in s.ahead.
func (s *sessionTrace) readSession() (*session, error) {
	head := s.ahead
	if head.turn != 1 {
		return nil, s.errorf(head.line, "turn", "turn %d of session %s is out of order: a session's first row must be turn 1", head.turn, quote(head.id))
	}
	if err := s.checkStart(); err != nil {
		return nil, err
	}
	p := &session{id: s.started}
	s.started++
	p.add(clamp(head.input, &s.clamped.Prompts), clamp(head.output, &s.clamped.Outputs), 0)
	for s.readAhead() {
		row := &s.ahead
		switch want := len(p.outputs) + 1; {
		case row.id != head.id && row.turn == 1:
			return p, nil
		case row.id != head.id:
			return nil, s.errorf(row.line, "turn", "turn %d of session %s is out of order: after turn %d of session %s, want turn %d of it or turn 1 of a new session (a session's rows are contiguous, in turn order)",
				row.turn, quote(row.id), want-1, quote(head.id), want)
		case row.turn != want:
			return nil, s.errorf(row.line, "turn", "turn %d of session %s is out of order: want turn %d", row.turn, quote(row.id), want)
		case !p.add(clamp(row.input, &s.clamped.Prompts), clamp(row.output, &s.clamped.Outputs), row.thinkNs):
			return nil, s.errorf(row.line, "input_tokens", "session %s's prompt passes %d tokens at turn %d", quote(row.id), maxTokens, row.turn)
		}
	}
	return p, s.err
}
