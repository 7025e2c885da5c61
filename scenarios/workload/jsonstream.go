package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// jsonStream reads a JSON document value by value with encoding/json's
// Decoder — a ShareGPT array entry by entry, an OTLP export span by span —
// so that a file of any size is streamed, knowing the line each value
// starts on, and failing on one value larger than maxLineBytes instead of
// buffering it whole.
type jsonStream struct {
	sequencer
	dec   *json.Decoder
	lines *lineIndex
}

func newJSONStream(r io.Reader, file string) *jsonStream {
	lines := &lineIndex{r: r, line: 1}
	dec := json.NewDecoder(lines)
	dec.UseNumber()
	return &jsonStream{sequencer: sequencer{file: file}, dec: dec, lines: lines}
}

// errValueTooLong is what lineIndex returns past a value's cap.
var errValueTooLong = errors.New("value too long")

// lineIndex passes a reader's bytes through, noting where its lines
// break, and refuses to read past limit (0: no limit). Queries ask for
// non-decreasing offsets; the breaks before the last one asked are
// dropped, so it holds only those of the bytes the decoder buffers.
type lineIndex struct {
	r     io.Reader
	read  int64   // bytes read
	nl    []int64 // offsets of the line breaks at or after passed
	line  int     // the line of offset passed
	limit int64
}

// Read implements io.Reader.
func (x *lineIndex) Read(p []byte) (int, error) {
	if x.limit > 0 {
		if x.read >= x.limit {
			return 0, errValueTooLong
		}
		p = p[:min(int64(len(p)), x.limit-x.read)]
	}
	n, err := x.r.Read(p)
	for i := 0; ; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			break
		}
		x.nl = append(x.nl, x.read+int64(i+j))
		i += j + 1
	}
	x.read += int64(n)
	return n, err
}

// lineAt is the 1-based line of offset off.
func (x *lineIndex) lineAt(off int64) int {
	return x.line + sort.Search(len(x.nl), func(i int) bool { return x.nl[i] >= off })
}

// pass drops the line breaks before off: later queries are at or past it.
func (x *lineIndex) pass(off int64) {
	k := sort.Search(len(x.nl), func(i int) bool { return x.nl[i] >= off })
	x.line += k
	x.nl = x.nl[k:]
}

// value decodes the next value whole into raw and returns the line it
// starts on; the value may be at most maxLineBytes long.
func (s *jsonStream) value(raw *json.RawMessage) (int, error) {
	s.lines.limit = s.lines.read + maxLineBytes
	err := s.dec.Decode(raw)
	s.lines.limit = 0
	if err != nil {
		return 0, s.streamError(err)
	}
	start := s.dec.InputOffset() - int64(len(*raw))
	line := s.lines.lineAt(start)
	s.lines.pass(start)
	return line, nil
}

// delim reads the next token, which must be the delimiter want ('[' or
// '{'); what names the document for the error.
func (s *jsonStream) delim(want json.Delim, what string) error {
	tok, err := s.dec.Token()
	if err == io.EOF {
		return s.errorf(0, "", "empty file: want %s", what)
	}
	if err != nil {
		return s.notJSON(err, what)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return s.errorf(s.line(), "", "want %s, got %s", what, tokenKind(tok))
	}
	return nil
}

// notJSON reports an error at the document's first token: a file that is
// not JSON at all says what was wanted.
func (s *jsonStream) notJSON(err error, what string) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return s.errorf(s.valueLine(), "", "not JSON (%s): want %s", strings.TrimPrefix(se.Error(), "json: "), what)
	}
	return s.streamError(err)
}

// line is the line of the decoder's position.
func (s *jsonStream) line() int { return s.lines.lineAt(s.dec.InputOffset()) }

// valueLine is the line of the value the decoder is at: past the
// position's blanks and separator, in the bytes it has buffered.
func (s *jsonStream) valueLine() int {
	buf, _ := io.ReadAll(s.dec.Buffered())
	skip := len(buf) - len(bytes.TrimLeft(buf, " \t\r\n,:"))
	return s.lines.lineAt(s.dec.InputOffset() + int64(skip))
}

// streamError turns a decoding error into a *ParseError at the line the
// decoder reached.
func (s *jsonStream) streamError(err error) error {
	var own *ParseError
	switch {
	case errors.As(err, &own):
		return own
	case errors.Is(err, errValueTooLong):
		return s.errorf(s.lines.lineAt(s.lines.read), "", "a value longer than %d bytes: not a trace", maxLineBytes)
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		return s.errorf(s.lines.lineAt(s.lines.read), "", "the file ends inside a JSON value")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return s.errorf(s.valueLine(), "", "%s", strings.TrimPrefix(se.Error(), "json: "))
	}
	return fmt.Errorf("%s: %w", s.file, err)
}

// tokenKind names a JSON token for an error.
func tokenKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
