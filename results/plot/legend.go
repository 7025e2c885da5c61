package plot

import (
	"image/color"
	"io"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// newLegend returns an empty legend in the house style, to be drawn with
// drawBeside.
func newLegend() *gplot.Legend {
	l := gplot.NewLegend()
	l.TextStyle.Font = sans(9)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(18)
	l.Padding = vg.Points(2)
	return &l
}

// legendGap separates the data area from a legend beside it.
const legendGap vg.Length = 6 // pt

// drawBeside draws p on c with legend l (if it has entries) in a column
// on the right, its top level with the top of the data area.
func drawBeside(c draw.Canvas, p *gplot.Plot, l *gplot.Legend) {
	drawBesideWidth(c, p, l, legendWidth(l))
}

// legendWidth returns the width l takes when drawn; 0 when it is empty.
func legendWidth(l *gplot.Legend) vg.Length {
	var c draw.Canvas
	r := l.Rectangle(c)
	return r.Max.X - r.Min.X
}

// drawBesideWidth is drawBeside with a legend column lw wide (0: none), so
// panels stacked above one another keep their data areas aligned.
func drawBesideWidth(c draw.Canvas, p *gplot.Plot, l *gplot.Legend, lw vg.Length) {
	if lw == 0 {
		p.Draw(c)
		return
	}
	pc := c
	pc.Max.X -= lw + 2*legendGap
	p.Draw(pc)
	lc := c
	lc.Min.X = pc.Max.X + legendGap
	lc.Max.Y = p.DataCanvas(pc).Max.Y
	l.Draw(lc)
}

// corner is where a legend goes inside the data area.
type corner struct{ top, left bool }

// renderLegended renders p with legend l inside its data area when it
// fits, in the corner that hides the least of ink (the polylines drawn, in
// data coordinates; pref wins ties); else beside it, the image widened so
// the data area keeps its width. p's axis ranges must be final.
func renderLegended(w io.Writer, f Format, p *gplot.Plot, l *gplot.Legend, ink []plotter.XYs, pref corner) error {
	var zero draw.Canvas
	r := l.Rectangle(zero)
	lw, lh := r.Max.X-r.Min.X+2*boxInner+boxMargin, r.Max.Y-r.Min.Y+2*boxInner+boxMargin
	// The data area of a plotWidth × plotHeight plot, roughly: axes,
	// labels and title take about an inch each way.
	dataW, dataH := plotWidth-vg.Inch, plotHeight-vg.Inch
	if lw <= maxInsideW*dataW && lh <= maxInsideH*dataH {
		at := bestCorner(p, ink, float64(lw/dataW), float64(lh/dataH), pref)
		return render(w, f, plotWidth, plotHeight, func(c draw.Canvas) { drawInside(c, p, l, at) })
	}
	width := max(plotWidth, plotWidth-vg.Inch+r.Max.X-r.Min.X+2*legendGap)
	return render(w, f, width, plotHeight, func(c draw.Canvas) { drawBeside(c, p, l) })
}

// bestCorner returns the corner where a box boxW × boxH (shares of the
// data area) covers the fewest points sampled along ink; pref, then the
// corner across from it horizontally, then vertically, win ties.
// Cost: O(ink points × inkSamples) per corner.
func bestCorner(p *gplot.Plot, ink []plotter.XYs, boxW, boxH float64, pref corner) corner {
	best, bestN := pref, -1
	for _, c := range []corner{pref, {pref.top, !pref.left}, {!pref.top, pref.left}, {!pref.top, !pref.left}} {
		x0, y0 := 0.0, 0.0
		if !c.left {
			x0 = 1 - boxW
		}
		if c.top {
			y0 = 1 - boxH
		}
		n := 0
		for _, line := range ink {
			n += samplesIn(p, line, x0, y0, x0+boxW, y0+boxH)
		}
		if bestN < 0 || n < bestN {
			best, bestN = c, n
		}
	}
	return best
}

// inkSamples is how many points are tested along each segment.
const inkSamples = 16

// samplesIn counts the points sampled along the polyline xys that fall in
// [x0, x1] × [y0, y1], in normalised axis coordinates.
func samplesIn(p *gplot.Plot, xys plotter.XYs, x0, y0, x1, y1 float64) int {
	n := 0
	for i := range xys {
		j := min(i+1, len(xys)-1)
		for k := range inkSamples {
			t := float64(k) / inkSamples
			x := p.X.Norm(xys[i].X + t*(xys[j].X-xys[i].X))
			y := p.Y.Norm(xys[i].Y + t*(xys[j].Y-xys[i].Y))
			if x >= x0 && x <= x1 && y >= y0 && y <= y1 {
				n++
			}
		}
	}
	return n
}

// steps returns the corners of the post-step line through xys
// (horizontal, then vertical), for bestCorner.
func steps(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, 2*len(xys))
	for i, xy := range xys {
		if i > 0 {
			out = append(out, plotter.XY{X: xy.X, Y: xys[i-1].Y})
		}
		out = append(out, xy)
	}
	return out
}

// maxInsideW and maxInsideH bound the share of the data area's width and
// height a legend may cover inside it; a bigger legend goes beside.
const maxInsideW, maxInsideH = 0.6, 0.45

// boxMargin separates a legend box from the data area's edges; boxInner
// its text from the box's edge.
const boxMargin, boxInner vg.Length = 6, 4

// drawInside draws p on c with legend l inside the data area, in corner
// at, on a white box.
func drawInside(c draw.Canvas, p *gplot.Plot, l *gplot.Legend, at corner) {
	p.Draw(c)
	var zero draw.Canvas
	r := l.Rectangle(zero)
	if r.Max.X == r.Min.X {
		return
	}
	da := p.DataCanvas(c)
	size := vg.Point{X: r.Max.X - r.Min.X + 2*boxInner, Y: r.Max.Y - r.Min.Y + 2*boxInner}
	box := vg.Rectangle{Min: vg.Point{X: da.Min.X + boxMargin, Y: da.Min.Y + boxMargin}}
	if !at.left {
		box.Min.X = da.Max.X - boxMargin - size.X
	}
	if at.top {
		box.Min.Y = da.Max.Y - boxMargin - size.Y
	}
	box.Max = box.Min.Add(size)
	c.SetColor(color.White)
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: gridColor, Width: vg.Points(0.7)})
	c.Stroke(box.Path())
	inner := vg.Point{X: boxInner, Y: boxInner}
	l.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: box.Min.Add(inner), Max: box.Max.Sub(inner)}})
}
