package plot

import (
	"fmt"
	"io"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// CDFSeries is one configuration's per-request latencies.
type CDFSeries struct {
	Name    string
	ValuesS []float64 // latencies, s, in any order; non-finite values are left out
}

// cdfSteps bounds the points drawn per CDF, however many requests there
// are, so an SVG of a million requests stays small.
const cdfSteps = 400

// LatencyCDF draws the empirical CDF of each series' latencies, with a
// dashed vertical line at sloS (0: none). metric names the latency ("TTFT",
// "TPOT") in the title and axis label. The axis runs in ms when everything
// shown is under 1 s, and stops a little past the largest p99 (or the SLO)
// so the body of the distribution is readable; each legend entry gives the
// share of its requests within the SLO. The values are not modified.
// Cost: O(n log n) for n values.
func LatencyCDF(w io.Writer, f Format, series []CDFSeries, sloS float64, metric string) error {
	sorted := make([][]float64, len(series))
	xMaxS := sloS * 1.25
	for i, s := range series {
		sorted[i] = finiteSorted(s.ValuesS)
		if n := len(sorted[i]); n > 0 {
			xMaxS = max(xMaxS, 1.1*sorted[i][(n-1)*99/100], sorted[i][0])
		}
	}
	unit, scale := timeUnit(xMaxS)
	p := newPlot(metric+" distribution", fmt.Sprintf("%s (%s)%s", metric, unit, tailNote(sorted, xMaxS)),
		"share of requests (CDF)")
	l := newLegend()
	var ink []plotter.XYs
	for i, s := range series {
		xys, err := addCDF(p, l, i, s.Name, sorted[i], scale, sloS)
		if err != nil {
			return err
		}
		ink = append(ink, steps(xys))
	}
	if sloS > 0 {
		line := refLine(sloS*scale, 0, sloS*scale, 1, dashed())
		p.Add(line)
		l.Add(fmt.Sprintf("SLO %s %s", trimFloat(sloS*scale), unit), line)
		ink = append(ink, line.XYs)
	}
	p.X.Min, p.X.Max = 0, xMaxS*scale
	p.Y.Min, p.Y.Max = 0, 1
	return renderLegended(w, f, p, l, ink, corner{top: false, left: false})
}

// addCDF adds the step line of one sorted series, scaled to the axis
// unit, and returns its points.
func addCDF(p *gplot.Plot, l *gplot.Legend, i int, name string, sorted []float64, scale, sloS float64) (plotter.XYs, error) {
	if len(sorted) == 0 {
		return nil, nil
	}
	line, err := plotter.NewLine(cdfXYs(sorted, scale))
	if err != nil {
		return nil, fmt.Errorf("plot: CDF %q: %w", name, err)
	}
	line.LineStyle, _ = lineStyle(i)
	line.StepStyle = plotter.PostStep
	p.Add(line)
	if sloS > 0 {
		within, _ := slices.BinarySearch(sorted, math.Nextafter(sloS, math.Inf(1)))
		name = fmt.Sprintf("%s: %s within SLO", name, percent(float64(within)/float64(len(sorted))))
	}
	l.Add(shorten(name), line)
	return line.XYs, nil
}

// tailNote says how much of the slowest series lies beyond the axis end
// xMaxS, or nothing when all of it is shown.
func tailNote(sorted [][]float64, xMaxS float64) string {
	beyond := 0.0
	for _, s := range sorted {
		if k, _ := slices.BinarySearch(s, math.Nextafter(xMaxS, math.Inf(1))); k < len(s) {
			beyond = max(beyond, float64(len(s)-k)/float64(len(s)))
		}
	}
	if beyond == 0 {
		return ""
	}
	return fmt.Sprintf("; the slowest %s lie beyond the axis", percent(beyond))
}

// cdfXYs returns at most cdfSteps+2 points of the empirical CDF of sorted
// (ascending, non-empty) values, the first at (min, 0) and the last at
// (max, 1).
func cdfXYs(sorted []float64, scale float64) plotter.XYs {
	n := len(sorted)
	xys := plotter.XYs{{X: sorted[0] * scale, Y: 0}}
	step := max(1, n/cdfSteps)
	for i := step - 1; i < n; i += step {
		xys = append(xys, plotter.XY{X: sorted[i] * scale, Y: float64(i+1) / float64(n)})
	}
	if xys[len(xys)-1].Y != 1 {
		xys = append(xys, plotter.XY{X: sorted[n-1] * scale, Y: 1})
	}
	return xys
}

// finiteSorted returns the finite values of vs, sorted ascending, in a new
// slice.
func finiteSorted(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if finite(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// timeUnit returns the unit to show durations up to maxS in, and the
// factor from s to it.
func timeUnit(maxS float64) (string, float64) {
	if maxS < 1 {
		return "ms", 1e3
	}
	return "s", 1
}

// trimFloat formats x with up to 3 significant decimals and no trailing
// zeros.
func trimFloat(x float64) string {
	return fmt.Sprint(math.Round(x*1000) / 1000)
}
