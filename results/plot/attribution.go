package plot

import (
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"handoff/results"
)

// AttributionBar is one configuration's (or one run's) mean request, split
// into named parts: time components (results.TimeNames) or owners.
type AttributionBar struct {
	Label   string
	TTFTS   map[string]float64 // mean s per part of the time to the first token
	DecodeS map[string]float64 // mean s per part of the time after it
}

// ComponentBar returns the bar of a's time components.
func ComponentBar(label string, a results.Attribution) AttributionBar {
	return AttributionBar{Label: label, TTFTS: a.TTFTS, DecodeS: a.DecodeS}
}

// OwnerBar returns the bar of a's owners.
func OwnerBar(label string, a results.Attribution) AttributionBar {
	b := AttributionBar{Label: label, TTFTS: map[string]float64{}, DecodeS: map[string]float64{}}
	for owner, t := range a.ByOwner {
		b.TTFTS[owner], b.DecodeS[owner] = t.TTFTS, t.DecodeS
	}
	return b
}

// maxBars bounds the bars drawn; later ones are left out (the title says so).
const maxBars = 30

// Attribution draws stacked horizontal bars of the mean time per part, one
// bar per AttributionBar (the first on top), in two panels: the time to
// the first token and the time after it. Each bar ends with its total.
// Parts that are zero in every bar are left out of the legend; time
// components keep the order and colours of results.TimeNames, other parts
// (owners) are sorted, Nobody last; the titles say "by component" when
// every part is a time component, else "by owner". Cost: O(bars × parts).
func Attribution(w io.Writer, f Format, bars []AttributionBar) error {
	return attributionChart(w, f, bars, "")
}

// attributionChart is Attribution with key, if not empty, naming what the
// bars' labels list ("rate_scale, decode.count" over labels "90, 4") in a
// line above both panels.
func attributionChart(w io.Writer, f Format, bars []AttributionBar, key string) error {
	note := ""
	if len(bars) > maxBars {
		note = fmt.Sprintf(" (first %d of %d)", maxBars, len(bars))
		bars = bars[:maxBars]
	}
	return attributionPage(w, f, bars, key, note)
}

// attributionPage draws at most maxBars bars, with note after each panel's
// title (which bars of how many these are).
func attributionPage(w io.Writer, f Format, bars []AttributionBar, key, note string) error {
	parts := partOrder(bars)
	by := ", by component"
	if slices.ContainsFunc(parts, func(p string) bool { return !slices.Contains(results.TimeNames[:], p) }) {
		by = ", by owner"
	}
	note = by + note
	panelH := vg.Inch + vg.Length(len(bars))*vg.Points(max(16, 30-2*float64(len(bars))))
	top, topLegend := stackedPanel("Before the first token (TTFT)"+note, bars, parts, panelH,
		func(b AttributionBar) map[string]float64 { return b.TTFTS })
	bottom, bottomLegend := stackedPanel("After the first token (decode)"+note, bars, parts, panelH,
		func(b AttributionBar) map[string]float64 { return b.DecodeS })
	lw := max(legendWidth(topLegend), legendWidth(bottomLegend))
	headH := vg.Length(0)
	if key != "" {
		headH = keyLineHeight
	}
	return render(w, f, plotWidth, max(2*panelH, 3.4*vg.Inch)+headH, func(c draw.Canvas) {
		if key != "" {
			drawKeyLine(c, "bars: "+cut(key, maxHeaderRunes))
			c.Max.Y -= headH
		}
		half := c
		half.Min.Y = c.Min.Y + (c.Max.Y-c.Min.Y)/2
		drawBesideWidth(half, top, topLegend, lw)
		half.Max.Y, half.Min.Y = half.Min.Y-vg.Points(8), c.Min.Y
		drawBesideWidth(half, bottom, bottomLegend, lw)
	})
}

// keyLineHeight is the height of the line drawKeyLine writes.
const keyLineHeight vg.Length = 18 // pt

// drawKeyLine writes s in the top-left corner of c, in the axis labels'
// font.
func drawKeyLine(c draw.Canvas, s string) {
	st := draw.TextStyle{Color: inkColor, Font: sans(10), Handler: gplot.DefaultTextHandler}
	st.XAlign, st.YAlign = draw.XLeft, draw.YTop
	c.FillText(st, vg.Point{X: c.Min.X, Y: c.Max.Y}, s)
}

// stackedPanel returns one panel of stacked bars of the parts get returns,
// and its legend.
func stackedPanel(title string, bars []AttributionBar, parts []string, panelH vg.Length,
	get func(AttributionBar) map[string]float64) (*gplot.Plot, *gplot.Legend) {
	n := len(bars)
	totals := make([]float64, n)
	for i, b := range bars {
		for _, v := range get(b) {
			totals[i] += v
		}
	}
	unit, scale := timeUnit(slices.Max(append(totals, 0)))
	p := newPlot(title, fmt.Sprintf("mean time per request (%s)", unit), "")
	l := newLegend()
	barW := min(vg.Points(16), 0.6*(panelH-0.9*vg.Inch)/vg.Length(max(n, 1)))
	var below *plotter.BarChart
	for k, part := range parts {
		vals := make(plotter.Values, n)
		for i, b := range bars {
			vals[n-1-i] = get(b)[part] * scale
		}
		if slices.Max(append(vals, 0)) <= 0 {
			continue
		}
		bc := newBar(vals, barW, partColor(part, k))
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		l.Add(shorten(part), bc)
	}
	addTotals(p, bars, totals, scale, unit)
	return p, l
}

// newBar returns horizontal bars of vals, in colour c with a thin white
// edge so stacked parts stay apart.
func newBar(vals plotter.Values, width vg.Length, c color.Color) *plotter.BarChart {
	bc, err := plotter.NewBarChart(vals, width)
	if err != nil {
		panic("plot: " + err.Error()) // width > 0 and finite values never fail
	}
	bc.Horizontal = true
	bc.Color = c
	bc.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
	return bc
}

// addTotals names the bars on the y axis and writes each total at its end.
func addTotals(p *gplot.Plot, bars []AttributionBar, totals []float64, scale float64, unit string) {
	n := len(bars)
	names := make([]string, n)
	xys := make(plotter.XYs, n)
	labels := make([]string, n)
	for i, b := range bars {
		names[n-1-i] = shorten(b.Label)
		xys[n-1-i] = plotter.XY{X: totals[i] * scale, Y: float64(n - 1 - i)}
		labels[n-1-i] = fmt.Sprintf("%.3g %s", totals[i]*scale, unit)
	}
	if n > 0 {
		p.NominalY(names...)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err == nil {
			for i := range lb.TextStyle {
				lb.TextStyle[i].Font = sans(8)
				lb.TextStyle[i].YAlign = draw.YCenter
			}
			lb.Offset = vg.Point{X: vg.Points(3)}
			p.Add(lb)
		}
	}
	p.X.Min = 0
	p.X.Max = max(p.X.Max*1.18, 1e-9)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Padding = 0
}

// partOrder returns every part named in the bars: time components in
// TimeNames order, then other names sorted, Nobody last.
func partOrder(bars []AttributionBar) []string {
	seen := map[string]bool{}
	for _, b := range bars {
		for _, m := range []map[string]float64{b.TTFTS, b.DecodeS} {
			for name := range m {
				seen[name] = true
			}
		}
	}
	var order []string
	for _, name := range results.TimeNames {
		if seen[name] {
			order = append(order, name)
			delete(seen, name)
		}
	}
	var rest []string
	for name := range seen {
		rest = append(rest, name)
	}
	slices.SortFunc(rest, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == results.Nobody:
			return 1
		case b == results.Nobody:
			return -1
		}
		return strings.Compare(a, b)
	})
	return append(order, rest...)
}

// componentColors give each time component a fixed colour: queueing in a
// light tint of its stage's compute colour, losses in warm reds.
var componentColors = map[string]color.RGBA{
	"router_queue": rgb(0xa8, 0xa8, 0xa8), "prefill_queue": rgb(0xf6, 0xc0, 0x8a),
	"prefill_compute": rgb(0xe0, 0x6c, 0x12), "transfer": rgb(0x8e, 0x6c, 0xd0),
	"decode_queue_first": rgb(0x9c, 0xd4, 0xd8), "decode_compute": rgb(0x1f, 0x63, 0xb4),
	"decode_queue": rgb(0x9d, 0xbf, 0xe6), "reprefill": rgb(0xc0, 0x24, 0x24),
	"swap": rgb(0x8a, 0x5a, 0x2b), "rejection": rgb(0xe8, 0x7a, 0xb0),
}

// partColor returns a part's colour: a component's own, grey for
// Nobody, else the k-th palette colour.
func partColor(part string, k int) color.Color {
	if c, ok := componentColors[part]; ok {
		return c
	}
	if part == results.Nobody {
		return mutedColor
	}
	return palette[k%len(palette)]
}
