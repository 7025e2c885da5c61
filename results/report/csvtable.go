package report

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
)

// csvFile is a CSV file read whole: its header and rows.
type csvFile struct {
	path   string
	header []string
	rows   [][]string
}

// readCSV reads a CSV file whose rows all have the header's width.
func readCSV(path string) (*csvFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty file, want a header line", path)
	}
	return &csvFile{path: path, header: recs[0], rows: recs[1:]}, nil
}

// col returns the position of the named column, or -1.
func (c *csvFile) col(name string) int {
	for i, h := range c.header {
		if h == name {
			return i
		}
	}
	return -1
}

// float returns row i's value in column j; an error names the file, the
// line and the column.
func (c *csvFile) float(i, j int) (float64, error) {
	v, err := strconv.ParseFloat(c.rows[i][j], 64)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: column %s: not a number: %q", c.path, i+2, c.header[j], c.rows[i][j])
	}
	return v, nil
}

// table returns the file as a sortable table: every column, each head
// with its definition (Define), numbers shown to 4 significant digits
// and sorted by value. The columns named in lead (those the file has)
// come right after the first n columns, the others after them in the
// file's order.
func (c *csvFile) table(id, caption string, n int, lead ...string) table {
	order := c.order(n, lead)
	t := table{ID: id, Caption: caption, Sortable: true}
	for _, j := range order {
		t.Head = append(t.Head, cell{Text: c.header[j], Def: Define(c.header[j])})
	}
	for _, rec := range c.rows {
		row := make([]cell, len(order))
		for k, j := range order {
			row[k] = csvCell(rec[j])
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// order returns the column positions: the first n, then lead's, then
// the rest.
func (c *csvFile) order(n int, lead []string) []int {
	n = min(n, len(c.header))
	taken := make([]bool, len(c.header))
	var order []int
	add := func(j int) {
		if j >= 0 && !taken[j] {
			taken[j] = true
			order = append(order, j)
		}
	}
	for j := range n {
		add(j)
	}
	for _, name := range lead {
		add(c.col(name))
	}
	for j := range c.header {
		add(j)
	}
	return order
}

// csvCell shows a CSV value: a number to 4 significant digits (integers
// whole), anything else as it is.
func csvCell(s string) cell {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return intCell(n)
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return numCell(v, 0)
	}
	return textCell(s)
}
