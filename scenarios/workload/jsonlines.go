package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// jsonLines yields a JSONL file's non-blank lines, trimmed, counting every
// line: what the JSONL trace readers (Mooncake, sessions, a mapped JSONL
// log) parse one object from.
type jsonLines struct {
	sc   *bufio.Scanner
	line int // the line last read, 1-based
}

func newJSONLines(r io.Reader) jsonLines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	return jsonLines{sc: sc}
}

// next returns the next non-blank line, or nil at the end of the file. A
// line longer than maxLineBytes is a *ParseError of file at that line;
// another read error names file.
func (j *jsonLines) next(file string) ([]byte, error) {
	for j.sc.Scan() {
		j.line++
		if b := bytes.TrimSpace(j.sc.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	if err := j.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{File: file, Line: j.line + 1,
				Msg: fmt.Sprintf("line longer than %d bytes: not a trace", maxLineBytes)}
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return nil, nil
}
