package report

import (
	"html/template"
	"strconv"
)

// page is what the template renders: a title and the sections in order.
type page struct {
	Title    string
	Kind     string // "run", "sweep", "goodput search", "plan"
	Dir      string
	Sections []section
}

// section is one heading of a report with its facts, tables, plots and
// preformatted text, rendered in that order.
type section struct {
	ID, Title, Def string
	Notes          []string // short paragraphs
	Facts          []fact
	Tables         []table
	Figures        []figure
	Pre            string // e.g. scenario.yaml, in a collapsed block
	PreTitle       string
}

// fact is one named figure with its value and definition.
type fact struct{ Name, Value, Def string }

// table is an HTML table; a Sortable one sorts by a click on a head.
type table struct {
	ID, Caption string
	Sortable    bool
	Head        []cell
	Rows        [][]cell
}

// cell is a table cell: its text, its sort key (a number as text, or ""
// to sort by the text) and, for heads, its definition.
type cell struct {
	Text, Key, Def string
	Num            bool // right-aligned
}

// figure is one inline SVG plot.
type figure struct {
	Name, Title, Def string
	SVG              template.HTML
}

// textCell returns a cell holding s.
func textCell(s string) cell { return cell{Text: s} }

// numCell returns a numeric cell showing v with prec significant digits
// (%.4g when prec is 0), sorting by v.
func numCell(v float64, prec int) cell {
	if prec == 0 {
		prec = 4
	}
	return cell{Text: strconv.FormatFloat(v, 'g', prec, 64), Key: strconv.FormatFloat(v, 'g', -1, 64), Num: true}
}

// fixedCell returns a numeric cell showing v with dec decimals.
func fixedCell(v float64, dec int) cell {
	return cell{Text: strconv.FormatFloat(v, 'f', dec, 64), Key: strconv.FormatFloat(v, 'g', -1, 64), Num: true}
}

// intCell returns a numeric cell showing n.
func intCell(n int64) cell {
	s := strconv.FormatInt(n, 10)
	return cell{Text: s, Key: s, Num: true}
}

// heads returns table heads for names, each with its definition.
func heads(names ...string) []cell {
	hs := make([]cell, len(names))
	for i, n := range names {
		hs[i] = cell{Text: n, Def: Define(n)}
	}
	return hs
}
