package workload

import (
	"encoding/csv"
	"io"

	"handoff/sim"
)

// csvTrace streams a CSV trace with a header row. It locates three columns by
// name (timestamp, prompt tokens, output tokens) and ignores the others, so
// column order and extra columns do not matter. Cost per row: one string
// allocation inside encoding/csv; the record slice is reused.
type csvTrace struct {
	sequencer
	cr        *csv.Reader
	names     [3]string // wanted column names: timestamp, prompt, output
	cols      []int     // their indices, nil until the header is read
	parseTime func(string) (int64, bool)
	timeHelp  string // what a valid timestamp looks like, for errors
}

func newCSVTrace(r io.Reader, file string, names [3]string, parseTime func(string) (int64, bool), timeHelp string) *csvTrace {
	cr := csv.NewReader(newLineCapped(r, file))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1 // counted per row, for a better message
	cr.TrimLeadingSpace = true
	return &csvTrace{
		sequencer: sequencer{file: file},
		cr:        cr, names: names, parseTime: parseTime, timeHelp: timeHelp,
	}
}

// Next implements sim.Source.
func (c *csvTrace) Next(r *sim.Request) (bool, error) {
	if c.err != nil || c.done {
		return false, c.err
	}
	if c.cols == nil {
		if err := c.readHeader(); err != nil {
			return c.fail(err)
		}
	}
	rec, err := c.cr.Read()
	if err == io.EOF {
		c.done = true
		return false, nil
	}
	if err != nil {
		return c.fail(c.csvError(err))
	}
	line, _ := c.cr.FieldPos(0)
	if err := c.row(r, rec, line); err != nil {
		return c.fail(err)
	}
	return true, nil
}

func (c *csvTrace) readHeader() error {
	header, err := c.cr.Read()
	if err == io.EOF {
		return c.errorf(0, "", "empty file: expected a header row with columns %q, %q, %q",
			c.names[0], c.names[1], c.names[2])
	}
	if err != nil {
		return c.csvError(err)
	}
	c.cols, err = c.columns(header, c.names[:]...)
	return err
}

// row parses one record into r.
func (c *csvTrace) row(r *sim.Request, rec []string, line int) error {
	for _, i := range c.cols {
		if i >= len(rec) {
			return c.errorf(line, "", "%d fields, want at least %d (a %q column)", len(rec), i+1, c.names[0])
		}
	}
	ts := rec[c.cols[0]]
	tsNs, ok := c.parseTime(ts)
	if !ok {
		return c.errorf(line, c.names[0], "%s is not %s", quote(ts), c.timeHelp)
	}
	prompt, err := c.parseTokens(line, c.names[1], rec[c.cols[1]])
	if err != nil {
		return err
	}
	output, err := c.parseTokens(line, c.names[2], rec[c.cols[2]])
	if err != nil {
		return err
	}
	return c.emit(r, line, c.names[0], tsNs, prompt, output)
}
