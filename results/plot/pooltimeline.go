package plot

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PoolTimeline draws a pool's instances as one picture: their KV
// occupancy as a band (the least and the most used instance, the median
// as a line) above the pool's running and waiting sequences summed, with
// the pool's max_num_seqs summed as a dashed line, and a red mark at each
// of its preemptions. The instances share the sampling grid
// (sim.Timeline), so sample k of each is the same instant. Cost:
// O(instances × samples · log instances).
func PoolTimeline(w io.Writer, f Format, pool string, members []InstanceTimeline) error {
	if len(members) == 0 {
		return fmt.Errorf("plot: pool %s has no timelines", pool)
	}
	lo, mid, hi, total := poolSamples(members)
	loXY, _, _ := timelineXYs(lo)
	hiXY, _, _ := timelineXYs(hi)
	kv, _, _ := timelineXYs(mid)
	_, batch, waiting := timelineXYs(total)
	top := newPlot(fmt.Sprintf("%s (%d instances): KV cache and sequences", shorten(pool), len(members)), "",
		"KV blocks in use (%)")
	l := newLegend()
	if err := addBand(top, l, loXY, hiXY, "KV in use, least to most used"); err != nil {
		return err
	}
	if err := addStep(top, l, kv, "KV in use, median", 0); err != nil {
		return err
	}
	var preemptions []float64
	limit := 0
	for _, m := range members {
		preemptions = append(preemptions, m.PreemptionS...)
		limit += m.MaxSeqs
	}
	if err := addPreemptions(top, l, preemptions); err != nil {
		return err
	}
	top.Y.Min, top.Y.Max = 0, 106
	top.X.Tick.Marker = niceTicks{hideLabels: true}
	bottom := newPlot("", "simulated time (s)", "sequences (pool total)")
	for i, s := range []struct {
		xys  plotter.XYs
		name string
	}{{batch, "running"}, {waiting, "waiting"}} {
		if err := addStep(bottom, l, s.xys, s.name, 2+i); err != nil {
			return err
		}
	}
	if err := addLimit(bottom, l, batch, float64(limit), "max_num_seqs (pool)"); err != nil {
		return err
	}
	bottom.Y.Min = 0
	return drawTwoPanels(w, f, top, bottom, l)
}

// poolSamples turns the members' samples into per-instant series: the
// least used, median and most used instance's KV share (lo, mid, hi), and
// the summed running and waiting sequences (total). Samples past the
// shortest member's are left out.
func poolSamples(members []InstanceTimeline) (lo, mid, hi, total []Sample) {
	n := len(members[0].Samples)
	for _, m := range members {
		n = min(n, len(m.Samples))
	}
	kv := make([]float64, len(members))
	for k := range n {
		var sum Sample
		for i, m := range members {
			s := m.Samples[k]
			kv[i] = s.KVUsed
			sum.Batch += s.Batch
			sum.Waiting += s.Waiting
		}
		slices.Sort(kv)
		t := members[0].Samples[k].TimeS
		sum.TimeS = t
		lo = append(lo, Sample{TimeS: t, KVUsed: kv[0]})
		mid = append(mid, Sample{TimeS: t, KVUsed: kv[len(kv)/2]})
		hi = append(hi, Sample{TimeS: t, KVUsed: kv[len(kv)-1]})
		total = append(total, sum)
	}
	return lo, mid, hi, total
}

// addBand fills the area between the lo and hi step lines.
func addBand(p *gplot.Plot, l *gplot.Legend, lo, hi plotter.XYs, name string) error {
	if len(lo) == 0 || len(lo) != len(hi) {
		return nil
	}
	pts := make(plotter.XYs, 0, 4*len(lo))
	for i := range hi { // the upper edge forward, as steps
		pts = append(pts, hi[i])
		if i+1 < len(hi) {
			pts = append(pts, plotter.XY{X: hi[i+1].X, Y: hi[i].Y})
		}
	}
	for i := len(lo) - 1; i >= 0; i-- { // the lower edge back
		if i+1 < len(lo) {
			pts = append(pts, plotter.XY{X: lo[i+1].X, Y: lo[i].Y})
		}
		pts = append(pts, lo[i])
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		return fmt.Errorf("plot: %s: %w", name, err)
	}
	c, _ := lineStyle(0)
	rgb := c.Color.(color.RGBA)
	poly.Color = color.NRGBA{R: rgb.R, G: rgb.G, B: rgb.B, A: 60}
	poly.LineStyle.Width = 0
	p.Add(poly)
	l.Add(name, poly)
	return nil
}

// drawTwoPanels renders top above bottom on one time axis, the legend to
// the right of the top panel.
func drawTwoPanels(w io.Writer, f Format, top, bottom *gplot.Plot, l *gplot.Legend) error {
	xMin, xMax := min(top.X.Min, bottom.X.Min), max(top.X.Max, bottom.X.Max)
	top.X.Min, top.X.Max, bottom.X.Min, bottom.X.Max = xMin, xMax, xMin, xMax
	lw := legendWidth(l)
	return render(w, f, plotWidth, plotHeight, func(c draw.Canvas) {
		c.Max.X -= lw + 2*legendGap
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(4)}
		cs := gplot.Align([][]*gplot.Plot{{top}, {bottom}}, tiles, c)
		top.Draw(cs[0][0])
		bottom.Draw(cs[1][0])
		lc := c
		lc.Min.X, lc.Max.X = c.Max.X+legendGap, c.Max.X+legendGap+lw
		lc.Max.Y = top.DataCanvas(cs[0][0]).Max.Y
		l.Draw(lc)
	})
}
