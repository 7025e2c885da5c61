package plot

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// CurvePoint is one configuration's result at one request rate.
type CurvePoint struct {
	Rate              float64 // offered request rate, in the unit its Curve's RateLabel names
	Attainment        float64 // share of requests that met the SLO, 0..1
	RequestGoodputRPS float64 // request goodput: requests per s of the run that met the SLO
}

// Curve is one configuration's results over request rates. Points may come
// in any order; they are drawn sorted by Rate, and non-finite values are
// left out.
type Curve struct {
	Name      string
	RateLabel string // x-axis label with its unit; the first non-empty one is used, "" = defaultRateLabel
	// AxisName is what the x axis is, for the titles, when it is not the
	// request rate (a sweep varying no rate); the first non-empty one is
	// used.
	AxisName string
	// LegendTitle is an unmarked first legend line saying what the names
	// list ("decode.hardware, decode.count" over names "h200, 4"); the
	// first non-empty one is used.
	LegendTitle string
	// Hue and Variant pick the line's look when the curves form a grid of
	// settings: curves of one Hue share a colour, curves of one Variant a
	// dash pattern and marker. Zero in every curve: each curve gets its
	// own colour.
	Hue, Variant int
	Points       []CurvePoint
}

// defaultRateLabel labels the rate axis when no curve names one.
const defaultRateLabel = "request rate (req/s)"

// Attainment draws SLO attainment (%) against request rate, one line per
// curve, with a dashed horizontal line at target (a share, 0..1; 0 draws
// none): the rate where a line crosses it is the configuration's
// capacity. Cost: O(points log points).
func Attainment(w io.Writer, f Format, curves []Curve, target float64) error {
	return AttainmentMarked(w, f, curves, target, nil)
}

// Mark is a rate marked on a plot by a vertical line: an answer such as
// the max goodput.
type Mark struct {
	Rate  float64
	Label string
}

// AttainmentMarked is Attainment with each mark's rate drawn as a
// vertical red line from 0 to 100 %, named in the legend.
func AttainmentMarked(w io.Writer, f Format, curves []Curve, target float64, marks []Mark) error {
	p := newPlot("SLO attainment vs "+axisName(curves), rateLabel(curves), "SLO attainment (%)")
	l := newLegend()
	ink, err := addCurves(p, l, curves, func(pt CurvePoint) float64 { return 100 * pt.Attainment })
	if err != nil {
		return err
	}
	if target > 0 && !math.IsInf(p.X.Min, 0) {
		line := refLine(p.X.Min, 100*target, p.X.Max, 100*target, dashed())
		p.Add(line)
		l.Add(fmt.Sprintf("target %s", percent(target)), line)
		ink = append(ink, line.XYs)
	}
	for _, m := range marks {
		if !finite(m.Rate) {
			continue
		}
		ls := dashed()
		ls.Color = alertColor
		line := refLine(m.Rate, 0, m.Rate, 100, ls)
		p.Add(line)
		l.Add(m.Label, line)
		ink = append(ink, line.XYs)
	}
	p.Y.Min, p.Y.Max = 0, 100
	return renderLegended(w, f, p, l, ink, corner{top: false, left: true})
}

// RequestGoodput draws request goodput (req/s: the requests of a run that
// met the SLO, per second of the run) against request rate, one line per
// curve. Cost: O(points log points).
func RequestGoodput(w io.Writer, f Format, curves []Curve) error {
	p := newPlot("Request goodput vs "+axisName(curves), rateLabel(curves), "request goodput (req/s within SLO)")
	l := newLegend()
	ink, err := addCurves(p, l, curves, func(pt CurvePoint) float64 { return pt.RequestGoodputRPS })
	if err != nil {
		return err
	}
	p.Y.Min = 0
	return renderLegended(w, f, p, l, ink, corner{top: true, left: true})
}

// addCurves adds one line with markers per curve, y given by value, and
// its legend entry when there is more than one curve; it returns the
// lines' points.
func addCurves(p *gplot.Plot, l *gplot.Legend, curves []Curve, value func(CurvePoint) float64) ([]plotter.XYs, error) {
	var ink []plotter.XYs
	grid := slices.ContainsFunc(curves, func(c Curve) bool { return c.Hue != 0 || c.Variant != 0 })
	if title := legendTitle(curves); title != "" && len(curves) > 1 {
		l.Add(cut(title, maxHeaderRunes))
	}
	for i, c := range curves {
		xys := curveXYs(c.Points, value)
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("plot: curve %q: %w", c.Name, err)
		}
		line.LineStyle, pts.GlyphStyle = lineStyle(i)
		if grid {
			line.LineStyle, pts.GlyphStyle = gridStyle(c.Hue, c.Variant)
		}
		p.Add(line, pts)
		if len(curves) > 1 {
			l.Add(shorten(c.Name), line, pts)
		}
		ink = append(ink, xys)
	}
	return ink, nil
}

// curveXYs returns the finite (rate, value) pairs sorted by rate.
func curveXYs(pts []CurvePoint, value func(CurvePoint) float64) plotter.XYs {
	xys := make(plotter.XYs, 0, len(pts))
	for _, pt := range pts {
		if x, y := pt.Rate, value(pt); finite(x) && finite(y) {
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
	}
	slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	return xys
}

// axisName is what the x axis is: the first curve's non-empty AxisName,
// else the request rate.
func axisName(curves []Curve) string {
	if n := firstSet(curves, func(c Curve) string { return c.AxisName }); n != "" {
		return n
	}
	return "request rate"
}

// rateLabel returns the first curve's non-empty RateLabel.
func rateLabel(curves []Curve) string {
	if l := firstSet(curves, func(c Curve) string { return c.RateLabel }); l != "" {
		return l
	}
	return defaultRateLabel
}

// legendTitle returns the first curve's non-empty LegendTitle, or "".
func legendTitle(curves []Curve) string {
	return firstSet(curves, func(c Curve) string { return c.LegendTitle })
}

// firstSet returns the first non-empty field(x) over xs, or "".
func firstSet[T any](xs []T, field func(T) string) string {
	for _, x := range xs {
		if v := field(x); v != "" {
			return v
		}
	}
	return ""
}

// percent formats a share as a percentage with up to one decimal, never
// rounding a share to exactly 0 or 100 % unless it is.
func percent(share float64) string {
	s := fmt.Sprintf("%.1f", 100*share)
	switch {
	case s == "0.0" && share > 0:
		return "<0.1%"
	case s == "100.0" && share < 1:
		return ">99.9%"
	}
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + "%"
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
