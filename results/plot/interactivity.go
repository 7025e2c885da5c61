package plot

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TIPoint is one closed-loop run: its concurrency (users), the tokens per
// second one user sees (1 / mean TPOT) and the fleet's output tokens per
// second per GPU.
type TIPoint struct {
	Concurrency      float64
	Interactivity    float64 // tokens/s per user
	ThroughputPerGPU float64 // output tokens/s per GPU
}

// TICurve is one configuration's closed-loop runs over concurrency,
// drawn in order of concurrency. Name, LegendTitle, Hue and Variant are
// as in Curve.
type TICurve struct {
	Name, LegendTitle string
	Hue, Variant      int
	Points            []TIPoint
}

// TIFront returns the indices of the points no other point beats — none
// has at least their interactivity and throughput per GPU, more of one —
// sorted by interactivity (so by falling throughput). Of equal points
// only the first is kept; non-finite points are never on the front.
// Cost: O(n log n).
func TIFront(points []TIPoint) []int {
	return front(len(points), func(i int) float64 { return points[i].Interactivity },
		func(i int) float64 { return points[i].ThroughputPerGPU })
}

// ThroughputInteractivity draws output throughput per device against
// interactivity (tokens/s per user), one line per configuration through
// its concurrencies, and the Pareto front over every point as a dashed
// line: the chart InferenceMAX publishes, per GPU. noun is what the
// devices are called on the axis ("GPU", "wafer", "device"). Cost:
// O(n log n) in the points.
func ThroughputInteractivity(w io.Writer, f Format, curves []TICurve, noun string) error {
	p := newPlot("Throughput vs interactivity", "interactivity (tok/s per user, 1 / mean TPOT)",
		"output throughput (tok/s per "+noun+")")
	l := newLegend()
	if title := tiLegendTitle(curves); title != "" && len(curves) > 1 {
		l.Add(cut(title, maxHeaderRunes))
	}
	grid := slices.ContainsFunc(curves, func(c TICurve) bool { return c.Hue != 0 || c.Variant != 0 })
	var ink []plotter.XYs
	var all []TIPoint
	for i, c := range curves {
		xys, users := tiXYs(c.Points)
		all = append(all, c.Points...)
		if len(xys) == 0 {
			continue
		}
		addConcurrencyLabels(p, xys, users)
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot: curve %q: %w", c.Name, err)
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
	if front, err := addTIFront(p, l, all); err != nil {
		return err
	} else if front != nil {
		ink = append(ink, front)
	}
	if len(ink) > 0 {
		// Throughput from 0, so that heights compare fleets fairly; interactivity
		// over the data's own span (a fleet's points may all sit within 93–115
		// tok/s, where an axis from 0 would squeeze them into a sliver).
		p.Y.Min = 0
		padRange(&p.X, 0.08)
		padRange(&p.Y, 0.04)
	}
	return renderLegended(w, f, p, l, ink, corner{top: true, left: false})
}

// addTIFront adds the Pareto front over all points as a dashed line and
// returns its points (nil when there are none).
func addTIFront(p *gplot.Plot, l *gplot.Legend, all []TIPoint) (plotter.XYs, error) {
	front := TIFront(all)
	if len(front) == 0 {
		return nil, nil
	}
	xys := make(plotter.XYs, len(front))
	for k, i := range front {
		xys[k] = plotter.XY{X: all[i].Interactivity, Y: all[i].ThroughputPerGPU}
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("plot: Pareto front: %w", err)
	}
	line.LineStyle = dashed()
	line.LineStyle.Width = vg.Points(1.5)
	line.LineStyle.Color = alertColor
	p.Add(line)
	l.Add("Pareto front", line)
	return xys, nil
}

// tiXYs returns a curve's finite (interactivity, throughput) pairs in
// order of concurrency, and each one's concurrency.
func tiXYs(pts []TIPoint) (plotter.XYs, []float64) {
	sorted := slices.Clone(pts)
	slices.SortStableFunc(sorted, func(a, b TIPoint) int { return cmp.Compare(a.Concurrency, b.Concurrency) })
	xys := make(plotter.XYs, 0, len(pts))
	var users []float64
	for _, pt := range sorted {
		if finite(pt.Interactivity) && finite(pt.ThroughputPerGPU) {
			xys = append(xys, plotter.XY{X: pt.Interactivity, Y: pt.ThroughputPerGPU})
			users = append(users, pt.Concurrency)
		}
	}
	return xys, users
}

// addConcurrencyLabels writes each point's concurrency ("c=64") beside
// it, as InferenceMAX's charts do: the line runs through the
// concurrencies, and the label says which point is which.
// Points that coincide (a saturated fleet serves 128 and 256 users
// alike) share one label, "c=128, 256".
func addConcurrencyLabels(p *gplot.Plot, xys plotter.XYs, users []float64) {
	var at plotter.XYs
	var labels []string
	for i, u := range users {
		c := strconv.FormatFloat(u, 'g', -1, 64)
		if k := len(at) - 1; k >= 0 && near(at[k], xys[i]) {
			labels[k] += ", " + c
			continue
		}
		at, labels = append(at, xys[i]), append(labels, "c="+c)
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: labels})
	if err != nil {
		panic("plot: " + err.Error()) // finite points with one label each never fail
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font = sans(8)
		lb.TextStyle[i].XAlign, lb.TextStyle[i].YAlign = draw.XLeft, draw.YBottom
	}
	lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
	p.Add(lb)
}

// tiLegendTitle returns the first non-empty LegendTitle, or "".
func tiLegendTitle(curves []TICurve) string {
	return firstSet(curves, func(c TICurve) string { return c.LegendTitle })
}

// near reports whether two points are within 0.1% of each other on both
// axes.
func near(a, b plotter.XY) bool {
	return math.Abs(a.X-b.X) <= 1e-3*math.Max(math.Abs(a.X), math.Abs(b.X)) &&
		math.Abs(a.Y-b.Y) <= 1e-3*math.Max(math.Abs(a.Y), math.Abs(b.Y))
}
