package plot

import (
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// niceTicks labels about five round values — 1, 2 or 5 × 10^k apart —
// with no more decimals than the step needs, and puts an unlabelled minor
// tick halfway between them. With hideLabels the ticks stay but their
// labels are blank (for a panel sharing its x axis with the one below).
type niceTicks struct{ hideLabels bool }

// Ticks implements gonum's plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !finite(lo) || !finite(hi) || hi <= lo {
		return []gplot.Tick{{Value: lo, Label: t.label(lo, 0)}}
	}
	step := niceStep((hi - lo) / 5)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	first := math.Ceil(lo/step-1e-9) * step
	var ticks []gplot.Tick
	for i := 0; ; i++ {
		v := first + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: t.label(v, decimals)})
		if minor := v + step/2; minor <= hi {
			ticks = append(ticks, gplot.Tick{Value: minor})
		}
	}
	if minor := first - step/2; minor >= lo {
		ticks = append(ticks, gplot.Tick{Value: minor})
	}
	return ticks
}

// label formats a tick value; never "-0".
func (t niceTicks) label(v float64, decimals int) string {
	if t.hideLabels {
		return " " // a blank major tick; "" would make it a minor one
	}
	p := math.Pow(10, float64(decimals))
	v = math.Round(v*p) / p
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// niceStep returns the smallest of 1, 2, 5 or 10 × 10^k that is ≥ raw.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}
