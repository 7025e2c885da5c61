package workload

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Limits on what a trace reader takes in, so that a file named by mistake
// (a device such as /dev/zero, a binary file, a file with no line breaks)
// fails with an error instead of exhausting memory.
const (
	// maxLineBytes bounds one line of any trace; a Mooncake row with a
	// million-token prompt's hash ids is about 16 kB.
	maxLineBytes = 16 << 20
	// maxWholeBytes bounds an input read whole (ServeGen's trace and
	// dataset, a few hundred kB in the published release).
	maxWholeBytes = 64 << 20
	// maxQuoted bounds how much of a bad value an error echoes.
	maxQuoted = 40
)

// lineCapped passes r's bytes through and fails, with a *ParseError at the
// line, once a line grows past maxLineBytes; the error is sticky. Cost: one
// scan for line breaks over the bytes read.
type lineCapped struct {
	r    io.Reader
	file string
	line int // 1-based line of the next byte
	run  int // bytes of that line read so far
	err  error
}

func newLineCapped(r io.Reader, file string) *lineCapped {
	return &lineCapped{r: r, file: file, line: 1}
}

// Read implements io.Reader.
func (c *lineCapped) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	for b := p[:n]; ; {
		i := bytes.IndexByte(b, '\n')
		seg := i
		if i < 0 {
			seg = len(b)
		}
		if c.run+seg > maxLineBytes {
			c.err = &ParseError{File: c.file, Line: c.line, Msg: fmt.Sprintf("line longer than %d bytes: not a trace", maxLineBytes)}
			return 0, c.err
		}
		if i < 0 {
			c.run += len(b)
			break
		}
		c.run, c.line, b = 0, c.line+1, b[i+1:]
	}
	return n, err
}

// sizeCapped passes r's bytes through and fails, with a *ParseError, once
// more than maxWholeBytes have been read; the error is sticky.
type sizeCapped struct {
	r    io.Reader
	file string
	left int64
	err  error
}

func newSizeCapped(r io.Reader, file string) *sizeCapped {
	return &sizeCapped{r: r, file: file, left: maxWholeBytes}
}

// Read implements io.Reader.
func (c *sizeCapped) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		c.err = &ParseError{File: c.file, Msg: fmt.Sprintf("larger than %d MiB: not a ServeGen file", maxWholeBytes>>20)}
		return 0, c.err
	}
	return n, err
}

// quote renders a bad value for an error: quoted, and cut to maxQuoted
// characters with "…" when longer, so that one error stays short whatever
// the input.
func quote(v string) string {
	if utf8.RuneCountInString(v) <= maxQuoted {
		return strconv.Quote(v)
	}
	cut := 0
	for i := 0; i < maxQuoted; i++ {
		_, size := utf8.DecodeRuneInString(v[cut:])
		cut += size
	}
	return strconv.Quote(v[:cut]) + "…"
}
