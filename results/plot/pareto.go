package plot

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CostPoint is one candidate deployment.
type CostPoint struct {
	Label             string
	CostPerH          float64 // fleet cost, $ per hour
	RequestGoodputRPS float64 // request goodput: requests per s of its run within the SLO
	Chosen            bool    // the one the planner picked
}

// ParetoFront returns the indices of the points no other point beats —
// none has at least their request goodput at no more cost, better in one —
// sorted by request goodput. Of equal points only the first is kept. Non-finite points
// are never on the front. Cost: O(n log n).
func ParetoFront(points []CostPoint) []int {
	return front(len(points), func(i int) float64 { return points[i].RequestGoodputRPS },
		func(i int) float64 { return -points[i].CostPerH })
}

// front returns the indices of the n points no other beats on both x and y
// (higher is better on each): none has at least their x and y, more of
// one. Sorted by rising x; of equal points only the first is kept;
// non-finite points are never on it. Cost: O(n log n).
func front(n int, x, y func(int) float64) []int {
	idx := make([]int, 0, n)
	for i := range n {
		if finite(x(i)) && finite(y(i)) {
			idx = append(idx, i)
		}
	}
	// Highest x first, highest y first among equals: a point is on the
	// front when its y beats everything before it.
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(x(b), x(a)), cmp.Compare(y(b), y(a)))
	})
	var out []int
	for _, i := range idx {
		if len(out) == 0 || y(i) > y(out[len(out)-1]) {
			out = append(out, i)
		}
	}
	slices.Reverse(out)
	return out
}

// Pareto draws cost ($/h) against request goodput, one marker per point: points
// off the front in grey, the front in colour joined by a line and
// labelled, the chosen point (if any) ringed in red. Cost: O(n log n).
func Pareto(w io.Writer, f Format, points []CostPoint) error {
	p := newPlot("Cost vs request goodput", "request goodput (req/s within SLO)", "cost ($/h)")
	l := newLegend()
	front := ParetoFront(points)
	onFront := make([]bool, len(points))
	for _, i := range front {
		onFront[i] = true
	}
	var rest, chosen plotter.XYs
	for i, pt := range points {
		if !finite(pt.CostPerH) || !finite(pt.RequestGoodputRPS) {
			continue
		}
		if !onFront[i] {
			rest = append(rest, plotter.XY{X: pt.RequestGoodputRPS, Y: pt.CostPerH})
		}
		if pt.Chosen {
			chosen = append(chosen, plotter.XY{X: pt.RequestGoodputRPS, Y: pt.CostPerH})
		}
	}
	addMarkers(p, l, rest, "dominated", draw.GlyphStyle{Color: mutedColor, Radius: vg.Points(3), Shape: draw.CircleGlyph{}})
	if err := addFront(p, l, points, front); err != nil {
		return err
	}
	addMarkers(p, l, chosen, "chosen", draw.GlyphStyle{Color: alertColor, Radius: vg.Points(7), Shape: draw.RingGlyph{}})
	padRange(&p.X, 0.08)
	padRange(&p.Y, 0.08)
	addFrontLabels(p, points, front)
	ink := []plotter.XYs{{}, chosen} // the front's line, then the markers one by one
	for _, i := range front {
		ink[0] = append(ink[0], plotter.XY{X: points[i].RequestGoodputRPS, Y: points[i].CostPerH})
	}
	for _, xy := range rest {
		ink = append(ink, plotter.XYs{xy})
	}
	return renderLegended(w, f, p, l, ink, corner{top: false, left: false})
}

// addFront adds the front's line and markers.
func addFront(p *gplot.Plot, l *gplot.Legend, points []CostPoint, front []int) error {
	if len(front) == 0 {
		return nil
	}
	xys := make(plotter.XYs, len(front))
	for k, i := range front {
		xys[k] = plotter.XY{X: points[i].RequestGoodputRPS, Y: points[i].CostPerH}
	}
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plot: Pareto front: %w", err)
	}
	line.LineStyle, pts.GlyphStyle = lineStyle(0)
	pts.GlyphStyle.Radius = vg.Points(3.5)
	p.Add(line, pts)
	l.Add("Pareto front", line, pts)
	return nil
}

// addFrontLabels writes each front point's label beside it, on the side
// facing the middle of the x axis so that no label pushes the data area
// in from the edge, and above it — or below, when the next point of the
// front is close enough for the two labels to collide. p's axis ranges
// must be final.
func addFrontLabels(p *gplot.Plot, points []CostPoint, front []int) {
	type place struct{ right, below bool }
	groups := map[place]*plotter.XYLabels{}
	var order []place
	names := distinctParts(points, front)
	for k, i := range front {
		pt := points[i]
		at := place{right: p.X.Norm(pt.RequestGoodputRPS) < 0.5}
		if k+1 < len(front) {
			next := points[front[k+1]]
			at.below = math.Abs(p.X.Norm(next.RequestGoodputRPS)-p.X.Norm(pt.RequestGoodputRPS)) < 0.25 &&
				math.Abs(p.Y.Norm(next.CostPerH)-p.Y.Norm(pt.CostPerH)) < 0.08
		}
		if groups[at] == nil {
			groups[at] = &plotter.XYLabels{}
			order = append(order, at)
		}
		g := groups[at]
		g.XYs = append(g.XYs, plotter.XY{X: pt.RequestGoodputRPS, Y: pt.CostPerH})
		g.Labels = append(g.Labels, shorten(names[k]))
	}
	for _, at := range order {
		lb, err := plotter.NewLabels(*groups[at])
		if err != nil {
			panic("plot: " + err.Error()) // finite points with one label each never fail
		}
		st := draw.TextStyle{Font: sans(8), XAlign: draw.XRight, YAlign: draw.YBottom}
		lb.Offset = vg.Point{X: -vg.Points(5), Y: vg.Points(3)}
		if at.right {
			st.XAlign, lb.Offset.X = draw.XLeft, vg.Points(5)
		}
		if at.below {
			st.YAlign, lb.Offset.Y = draw.YTop, -vg.Points(3)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font, lb.TextStyle[i].XAlign, lb.TextStyle[i].YAlign = st.Font, st.XAlign, st.YAlign
		}
		p.Add(lb)
	}
}

// distinctParts returns the front points' labels without the " + "
// parts every one of them shares: a plan's fleets on the front often
// differ only in the decode pool ("prefill 1×h100-sxm/tp4 + decode
// 3×h200/tp4" and "… + decode 4×h100-sxm/tp4"), and a label cut to fit
// would lose just the hardware that tells them apart. Labels with nothing
// in common, or a front of one, stay whole.
func distinctParts(points []CostPoint, front []int) []string {
	parts := make([][]string, len(front))
	for k, i := range front {
		parts[k] = strings.Split(points[i].Label, " + ")
	}
	names := make([]string, len(front))
	for k := range parts {
		var keep []string
		for j, part := range parts[k] {
			if !sharedPart(parts, j, part) {
				keep = append(keep, part)
			}
		}
		names[k] = strings.Join(keep, " + ")
		if len(keep) == 0 || len(front) < 2 {
			names[k] = points[front[k]].Label
		}
	}
	return names
}

// sharedPart reports whether every label's part j is part.
func sharedPart(parts [][]string, j int, part string) bool {
	for _, ps := range parts {
		if j >= len(ps) || ps[j] != part {
			return false
		}
	}
	return true
}

// addMarkers adds a scatter of xys in style gs, and its legend entry.
func addMarkers(p *gplot.Plot, l *gplot.Legend, xys plotter.XYs, name string, gs draw.GlyphStyle) {
	if len(xys) == 0 {
		return
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		panic("plot: " + err.Error()) // finite points never fail
	}
	sc.GlyphStyle = gs
	p.Add(sc)
	l.Add(name, sc)
}

// padRange widens an axis by share of its range on each side (at least
// a little when the range is empty) and keeps it at or above 0 when the
// data are.
func padRange(a *gplot.Axis, share float64) {
	if a.Min > a.Max {
		return
	}
	d := max((a.Max-a.Min)*share, 0.05*max(a.Max, -a.Min, 1e-9))
	nonNeg := a.Min >= 0
	a.Min -= d
	a.Max += d
	if nonNeg && a.Min < 0 {
		a.Min = 0
	}
}
