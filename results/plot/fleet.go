package plot

import (
	"fmt"
	"io"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"handoff/results"
)

// Fleet draws a changing fleet over a run: each pool's ready (routable)
// instances against simulated time as a solid step line, and the
// instances asked for (ready + requested: provisioning or loading
// weights) as a dashed step line in the pool's colour, each held from its
// change point on and drawn to endS (the run's end; the last point's time
// when smaller). Cost: O(points).
func Fleet(w io.Writer, f Format, pools []results.PoolCounts, endS float64) error {
	p := newPlot("instances per pool", "simulated time (s)", "instances")
	l := newLegend()
	var ink []plotter.XYs
	yMax := 1.0
	for i, pc := range pools {
		ready, asked := fleetXYs(pc.Points, endS)
		if len(ready) == 0 {
			continue
		}
		for k, s := range []struct {
			xys  plotter.XYs
			name string
		}{{ready, pc.Pool + ": ready"}, {asked, pc.Pool + ": asked for (ready + requested)"}} {
			line, err := plotter.NewLine(s.xys)
			if err != nil {
				return fmt.Errorf("plot: fleet %s: %w", pc.Pool, err)
			}
			line.LineStyle, _ = lineStyle(i)
			if k == 1 {
				line.LineStyle.Width = vg.Points(1)
				line.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			line.StepStyle = plotter.PostStep
			p.Add(line)
			l.Add(shorten(s.name), line)
			ink = append(ink, steps(s.xys))
			for _, xy := range s.xys {
				yMax = max(yMax, xy.Y)
			}
		}
	}
	p.Y.Min, p.Y.Max = 0, yMax*1.15
	p.X.Min = 0
	return renderLegended(w, f, p, l, ink, corner{top: false, left: false})
}

// fleetXYs returns a pool's ready and asked-for (ready + requested)
// counts as step points, with a last point at endS holding the last
// counts.
func fleetXYs(pts []results.CountPoint, endS float64) (ready, asked plotter.XYs) {
	for _, pt := range pts {
		t := float64(pt.AtNs) / 1e9
		ready = append(ready, plotter.XY{X: t, Y: float64(pt.Ready)})
		asked = append(asked, plotter.XY{X: t, Y: float64(pt.Ready + pt.Requested)})
	}
	if n := len(pts); n > 0 {
		last := max(endS, ready[n-1].X)
		ready = append(ready, plotter.XY{X: last, Y: ready[n-1].Y})
		asked = append(asked, plotter.XY{X: last, Y: asked[n-1].Y})
	}
	return ready, asked
}
