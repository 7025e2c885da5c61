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
	Aspect           float64 // height over width; 0 when unknown
}

// tallerBy is how much higher for its width than the flattest plot of
// its section a plot must be to count as tall: an attribution chart
// (one bar per point, two panels) beside a CDF.
const tallerBy = 1.2

// arrange orders each section's figures for a grid of two columns: the
// tall ones after the others, so that they stand beside each other (and
// their rows hold no short plot above a column of blank page); when the
// others are an odd number, the last of them goes to the very end, so
// that no row but the last has one plot.
func arrange(p *page) {
	for i := range p.Sections {
		figs := p.Sections[i].Figures
		flattest := 0.0
		for _, f := range figs {
			if f.Aspect > 0 && (flattest == 0 || f.Aspect < flattest) {
				flattest = f.Aspect
			}
		}
		tall := func(f figure) bool { return flattest > 0 && f.Aspect > tallerBy*flattest }
		var short, high []figure
		for _, f := range figs {
			if tall(f) {
				high = append(high, f)
			} else {
				short = append(short, f)
			}
		}
		if len(short)%2 == 1 && len(high) > 0 {
			short, high = short[:len(short)-1], append(high, short[len(short)-1])
		}
		copy(figs, append(short, high...))
	}
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
