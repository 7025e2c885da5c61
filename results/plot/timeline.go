package plot

import (
	"fmt"
	"image/color"
	"io"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sample is one instance's state at one instant.
type Sample struct {
	TimeS   float64 // simulated time, s
	KVUsed  float64 // share of the instance's KV blocks in use, 0..1
	Batch   int     // sequences in the running batch
	Waiting int     // sequences queued
}

// InstanceTimeline is what one instance did over a run.
type InstanceTimeline struct {
	Name        string
	Pool        string    // "" in files written before the column
	MaxSeqs     int       // max_num_seqs, the batch's limit; 0 if unknown
	Samples     []Sample  // in time order; each holds until the next
	PreemptionS []float64 // simulated times of preemptions, s
}

// timelineSteps bounds the points drawn per line: longer timelines are
// reduced to the maximum of each of this many equal time buckets, so
// peaks survive.
const timelineSteps = 1500

// Timeline draws an instance's KV occupancy (%) above its batch size and
// waiting queue, with its max_num_seqs as a dashed line, on a shared
// simulated-time axis, and a red mark above the KV panel at each
// preemption. Cost: O(samples + preemptions).
func Timeline(w io.Writer, f Format, inst InstanceTimeline) error {
	kv, batch, waiting := timelineXYs(inst.Samples)
	top := newPlot(shorten(inst.Name)+": KV cache and batch", "", "KV blocks in use (%)")
	l := newLegend()
	if err := addStep(top, l, kv, "KV in use", 0); err != nil {
		return err
	}
	if err := addPreemptions(top, l, inst.PreemptionS); err != nil {
		return err
	}
	top.Y.Min, top.Y.Max = 0, 106
	top.X.Tick.Marker = niceTicks{hideLabels: true}
	bottom := newPlot("", "simulated time (s)", "sequences")
	if err := addStep(bottom, l, batch, "batch size", 2); err != nil {
		return err
	}
	if err := addStep(bottom, l, waiting, "waiting", 3); err != nil {
		return err
	}
	if err := addLimit(bottom, l, kv, float64(inst.MaxSeqs), "max_num_seqs"); err != nil {
		return err
	}
	bottom.Y.Min = 0
	return drawTwoPanels(w, f, top, bottom, l)
}

// addStep adds a step line of xys in the i-th line colour, and its legend
// entry.
func addStep(p *gplot.Plot, l *gplot.Legend, xys plotter.XYs, name string, i int) error {
	if len(xys) == 0 {
		return nil
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot: timeline %s: %w", name, err)
	}
	line.LineStyle, _ = lineStyle(i)
	line.LineStyle.Width = vg.Points(1)
	line.StepStyle = plotter.PostStep
	c := line.LineStyle.Color.(color.RGBA)
	line.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 40}
	p.Add(line)
	l.Add(name, line)
	return nil
}

// addPreemptions marks each preemption time with a red triangle at the top
// of the KV panel.
func addPreemptions(p *gplot.Plot, l *gplot.Legend, timesS []float64) error {
	xys := make(plotter.XYs, 0, len(timesS))
	for _, t := range timesS {
		if finite(t) {
			xys = append(xys, plotter.XY{X: t, Y: 103})
		}
	}
	if len(xys) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("plot: preemptions: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: alertColor, Radius: vg.Points(2.5), Shape: draw.PyramidGlyph{}}
	p.Add(sc)
	l.Add(fmt.Sprintf("preemption (%d)", len(xys)), sc)
	return nil
}

// addLimit draws a dashed horizontal line at y over the time span of xys
// (nothing when y is 0: unknown).
func addLimit(p *gplot.Plot, l *gplot.Legend, xys plotter.XYs, y float64, name string) error {
	if y <= 0 || len(xys) == 0 {
		return nil
	}
	line, err := plotter.NewLine(plotter.XYs{{X: xys[0].X, Y: y}, {X: xys[len(xys)-1].X, Y: y}})
	if err != nil {
		return fmt.Errorf("plot: %s: %w", name, err)
	}
	line.LineStyle = draw.LineStyle{Color: alertColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	p.Add(line)
	l.Add(name, line)
	return nil
}

// timelineXYs returns the KV (%), batch and waiting lines of the finite
// samples, reduced to per-bucket maxima when there are more than
// timelineSteps.
func timelineXYs(samples []Sample) (kv, batch, waiting plotter.XYs) {
	var t0, t1 float64
	kept := samples[:0:0]
	for _, s := range samples {
		if finite(s.TimeS) && finite(s.KVUsed) {
			if len(kept) == 0 {
				t0 = s.TimeS
			}
			t1 = s.TimeS
			kept = append(kept, s)
		}
	}
	width := (t1 - t0) / timelineSteps
	for i, s := range kept {
		bucketT := s.TimeS
		if len(kept) > timelineSteps && width > 0 {
			bucketT = t0 + width*float64(int((s.TimeS-t0)/width))
		}
		if i > 0 && len(kv) > 0 && kv[len(kv)-1].X == bucketT {
			kv[len(kv)-1].Y = max(kv[len(kv)-1].Y, 100*s.KVUsed)
			batch[len(batch)-1].Y = max(batch[len(batch)-1].Y, float64(s.Batch))
			waiting[len(waiting)-1].Y = max(waiting[len(waiting)-1].Y, float64(s.Waiting))
			continue
		}
		kv = append(kv, plotter.XY{X: bucketT, Y: 100 * s.KVUsed})
		batch = append(batch, plotter.XY{X: bucketT, Y: float64(s.Batch)})
		waiting = append(waiting, plotter.XY{X: bucketT, Y: float64(s.Waiting)})
	}
	return kv, batch, waiting
}
