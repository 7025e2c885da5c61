package rundir

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// csvFile reads one CSV file of a run directory row by row, naming the
// file and the line of every error.
type csvFile struct {
	path   string
	f      *os.File
	r      *csv.Reader
	header []string
	line   int // of the last row read
}

// openCSV opens dir/name and reads its header line; rows may differ in
// width (older files have fewer columns).
func openCSV(dir, name string) (*csvFile, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c := &csvFile{path: path, f: f, r: csv.NewReader(f)}
	c.r.FieldsPerRecord = -1
	c.r.ReuseRecord = true
	h, err := c.r.Read()
	if err == io.EOF {
		err = fmt.Errorf("empty file, want a header line")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	c.header = append([]string(nil), h...)
	return c, nil
}

// next returns the next row, or nil at the end of the file.
func (c *csvFile) next() ([]string, error) {
	rec, err := c.r.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	c.line, _ = c.r.FieldPos(0)
	return rec, nil
}

func (c *csvFile) close() { c.f.Close() }

// errorf returns an error at the last row read.
func (c *csvFile) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", c.path, c.line, fmt.Sprintf(format, args...))
}

// columns returns the positions of the named columns in the header; a
// missing one is an error on line 1.
func (c *csvFile) columns(names ...string) ([]int, error) {
	idx := make([]int, len(names))
	for i, name := range names {
		idx[i] = -1
		for j, h := range c.header {
			if h == name {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("%s:1: no %s column", c.path, name)
		}
	}
	return idx, nil
}

// cells parses the cells of one row, each into its destination, naming
// the column of the first that does not parse.
type cells struct {
	c   *csvFile
	err error
}

func (p *cells) float(dst *float64, cell, column string) {
	if p.err != nil {
		return
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		p.err = p.c.errorf("column %s: not a number: %q", column, cell)
	}
	*dst = v
}

func (p *cells) int(dst *int64, cell, column string) {
	if p.err != nil {
		return
	}
	v, err := strconv.ParseInt(cell, 10, 64)
	if err != nil {
		p.err = p.c.errorf("column %s: not an integer: %q", column, cell)
	}
	*dst = v
}

// seconds parses a time in s into ns, rounded.
func (p *cells) seconds(dst *int64, cell, column string) {
	var s float64
	p.float(&s, cell, column)
	*dst = secondsToNs(s)
}

func secondsToNs(s float64) int64 { return int64(math.Round(s * 1e9)) }
