package docspec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Render makes the table's lines: the header (label heads, then column
// heads), the separator, and one line per row, its label cells followed by
// its columns computed from data[i].
func (s *Spec) Render(rows []Row, data []RowData) ([]string, error) {
	heads := slices.Clone(s.Labels)
	for _, c := range s.Columns {
		heads = append(heads, c.Head)
	}
	lines := []string{tableLine(heads), "|" + strings.Repeat("---|", len(heads))}
	for i, r := range rows {
		cells, err := s.cells(r, &data[i])
		if err != nil {
			return nil, fmt.Errorf("row %q: %v", r.Label(), err)
		}
		lines = append(lines, tableLine(cells))
	}
	return lines, nil
}

// cells computes one row's cells.
func (s *Spec) cells(r Row, d *RowData) ([]string, error) {
	cells := slices.Clone(r.Cells)
	for _, c := range s.Columns {
		vals := make([]value, len(c.Value))
		for i, e := range c.Value {
			v, err := d.eval(e)
			if err != nil {
				return nil, fmt.Errorf("column %q: %v", c.Head, err)
			}
			vals[i] = v
		}
		cell, err := formatCell(c.Format, c.Unit, vals)
		if err != nil {
			return nil, fmt.Errorf("column %q: %v", c.Head, err)
		}
		cells = append(cells, cell)
	}
	for _, b := range r.Bold {
		if b < 1 || b > len(cells) {
			return nil, fmt.Errorf("bold column %d: the table has %d", b, len(cells))
		}
		cells[b-1] = "**" + cells[b-1] + "**"
	}
	return cells, nil
}

// tableLine joins cells into a Markdown table line.
func tableLine(cells []string) string { return "| " + strings.Join(cells, " | ") + " |" }

// Select returns the records a row reads: those whose columns match the
// row's where (every where column must exist), sorted by the spec's order
// column (numerically, stable).
func (s *Spec) Select(r Row, recs []map[string]string) ([]map[string]string, error) {
	var out []map[string]string
	for _, rec := range recs {
		if matches(rec, r.Where) {
			out = append(out, rec)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("row %q: no record of %s has %v", r.Label(), s.File, r.Where)
	}
	if s.Order != "" {
		var err error
		slices.SortStableFunc(out, func(a, b map[string]string) int {
			x, e1 := field(a, s.Order)
			y, e2 := field(b, s.Order)
			if e1 != nil || e2 != nil || x.isStr || y.isStr {
				err = fmt.Errorf("order: %s is not a numeric column", s.Order)
				return 0
			}
			return cmp.Compare(x.num, y.num)
		})
		return out, err
	}
	return out, nil
}

// Join returns the records of a source that the row joins: those whose
// columns in the source's On equal the row's where values.
func (src Source) Join(r Row, recs []map[string]string) ([]map[string]string, error) {
	want := map[string]string{}
	for col, key := range src.On {
		v, ok := r.Where[key]
		if !ok {
			return nil, fmt.Errorf("row %q: source joins on %s, which the row's where does not give", r.Label(), key)
		}
		want[col] = v
	}
	var out []map[string]string
	for _, rec := range recs {
		if matches(rec, want) {
			out = append(out, rec)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("row %q: no record of %s has %v", r.Label(), src.File, want)
	}
	return out, nil
}

// matches reports whether a record has every column value in want.
func matches(rec, want map[string]string) bool {
	for k, v := range want {
		if rec[k] != v {
			return false
		}
	}
	return true
}
