package plot

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"handoff/results"
	"handoff/results/sweepdir"
)

// sweepTable is a sweep's results.csv: the point ids, the varied columns
// and the figures the plots need.
type sweepTable struct {
	path              string
	varied            []string   // the varied columns' names (scenario paths)
	ids               []string   // per row
	values            [][]string // per row, one per varied column
	lines             []int      // per row, its line in the file
	attainment        []float64  // per row, share 0..1
	requestGoodputRPS []float64  // per row
	// per row, when the table has the columns (older ones do not)
	throughputPerGPU, interactivity []float64
}

// The optional figure columns of the throughput-interactivity plot.
const (
	perGPUColumn        = "output_tokens_per_s_per_gpu"
	interactivityColumn = "interactivity_tokens_per_s_per_user"
)

// readSweep reads dir's results.csv through sweepdir.ReadResults, which
// splits its header into the varied columns and the figures. The figures
// must include attainment and request_goodput_rps.
func readSweep(dir string) (*sweepTable, error) {
	tab, err := sweepdir.ReadResults(dir)
	if err != nil {
		return nil, err
	}
	cols, err := columnIndex(tab.Path, tab.Figures, "attainment", "request_goodput_rps")
	if err != nil {
		return nil, err
	}
	if ti, err := columnIndex(tab.Path, tab.Figures, perGPUColumn, interactivityColumn); err == nil {
		cols = append(cols, ti...)
	}
	t := &sweepTable{path: tab.Path, varied: tab.Varied}
	for _, row := range tab.Rows {
		if err := t.add(row, cols); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// add appends one row; figure k is the row's figure cols[k]: attainment,
// request goodput, then, if cols has them, throughput per GPU and
// interactivity.
func (t *sweepTable) add(row sweepdir.Row, cols []int) error {
	var figs [4]float64
	for k, name := range []string{"attainment", "request_goodput_rps", perGPUColumn, interactivityColumn}[:len(cols)] {
		v, err := strconv.ParseFloat(strings.TrimSpace(row.Figures[cols[k]]), 64)
		if err != nil {
			return fmt.Errorf("%s:%d: column %s: not a number: %q", t.path, row.Line, name, row.Figures[cols[k]])
		}
		figs[k] = v
	}
	t.ids = append(t.ids, row.ID)
	t.values = append(t.values, row.Values)
	t.lines = append(t.lines, row.Line)
	t.attainment = append(t.attainment, figs[0])
	t.requestGoodputRPS = append(t.requestGoodputRPS, figs[1])
	if len(cols) == 4 {
		t.throughputPerGPU = append(t.throughputPerGPU, figs[2])
		t.interactivity = append(t.interactivity, figs[3])
	}
	return nil
}

// sweepFigures returns the plots of a sweep directory.
func sweepFigures(dir string, c Choice) ([]figure, error) {
	t, err := readSweep(dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	var rows [][]string
	var attrs []results.Attribution
	target, noun := 0.0, ""
	for i, id := range t.ids {
		if !sweepdir.HasPointSummary(dir, id) {
			continue // not run yet, or run elsewhere
		}
		sum, err := results.ReadSummary(sweepdir.PointSummaryPath(dir, id))
		if err != nil {
			return nil, err
		}
		if len(attrs) == 0 {
			target = sum.SLO.Target
		}
		noun = joinNoun(noun, sum.DeviceNoun())
		ids, rows = append(ids, id), append(rows, t.values[i])
		attrs = append(attrs, sum.Attribution)
	}
	figs, err := curveFigures(t, target)
	if err != nil {
		return nil, err
	}
	ti, err := tiFigures(t, orElse(noun, "device"))
	if err != nil {
		return nil, err
	}
	figs = append(figs, ti...)
	labels, header := rowLabels(shortNames(t.varied), rows, varyingColumns(rows))
	for i := range labels {
		labels[i] = orElse(labels[i], ids[i])
	}
	if err := c.check(dir, ids); err != nil {
		return nil, err
	}
	labels, attrs = c.choose(ids, labels, attrs)
	return append(figs, attributionFigures(labels, attrs, header)...), nil
}

// curveFigures returns attainment and request goodput against the rate
// column, or, when no varied column is a rate, against the first varied
// column whose values are all numbers (the seed aside); nothing when
// there is none.
func curveFigures(t *sweepTable, target float64) ([]figure, error) {
	rate := rateColumn(t.varied)
	axis := ""
	if rate < 0 {
		if rate = numericColumn(t); rate < 0 {
			return nil, nil
		}
		axis = shortNames(t.varied)[rate]
	}
	curves, err := sweepCurves(t, rate)
	if err != nil {
		return nil, err
	}
	for i := range curves {
		if axis != "" {
			curves[i].RateLabel, curves[i].AxisName = axis, axis
		}
	}
	return []figure{
		{"attainment", func(w io.Writer, f Format) error { return Attainment(w, f, curves, target) }},
		{"request_goodput", func(w io.Writer, f Format) error { return RequestGoodput(w, f, curves) }},
	}, nil
}

// concurrencyColumn is the varied column a closed-loop sweep steps.
const concurrencyColumn = "workload.client.concurrency"

// joinNoun returns what the devices of points called a and b are called
// together: the same noun, or "device" for several kinds; "" is none yet.
func joinNoun(a, b string) string {
	if a == "" || a == b {
		return b
	}
	return "device"
}

// tiFigures returns throughput per device (called noun) against interactivity, one curve
// per combination of the varied columns but the concurrency and the seed
// (grouped, named and styled as sweepCurves does; replicas averaged), or
// nothing when no varied column is the concurrency.
func tiFigures(t *sweepTable, noun string) ([]figure, error) {
	conc := slices.Index(t.varied, concurrencyColumn)
	if conc < 0 {
		return nil, nil
	}
	if len(t.interactivity) != len(t.values) {
		return nil, fmt.Errorf("%s:1: no %s and %s columns for the throughput-interactivity plot", t.path, perGPUColumn, interactivityColumn)
	}
	cols := varyingColumns(t.values, conc, slices.Index(t.varied, "seed"))
	names, title := rowLabels(shortNames(t.varied), t.values, cols)
	hue, variant := styleIndices(t.values, cols)
	var curves []TICurve
	index := map[string]int{}
	count := map[[2]float64]int{} // (curve, concurrency) → rows averaged into the point
	for i, vals := range t.values {
		x, err := strconv.ParseFloat(strings.TrimSpace(vals[conc]), 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %s: not a number: %q", t.path, t.lines[i], concurrencyColumn, vals[conc])
		}
		c, ok := index[names[i]]
		if !ok {
			c = len(curves)
			index[names[i]] = c
			cv := TICurve{Name: orElse(names[i], "all points"), LegendTitle: title}
			if hue != nil {
				cv.Hue, cv.Variant = hue[i], variant[i]
			}
			curves = append(curves, cv)
		}
		key := [2]float64{float64(c), x}
		count[key]++
		addTIMean(&curves[c], TIPoint{x, t.interactivity[i], t.throughputPerGPU[i]}, count[key])
	}
	return []figure{{"throughput_interactivity", func(w io.Writer, f Format) error {
		return ThroughputInteractivity(w, f, curves, noun)
	}}}, nil
}

// addTIMean folds pt into c's point at its concurrency, the n-th averaged
// into it, adding the point if it is the first.
func addTIMean(c *TICurve, pt TIPoint, n int) {
	k := slices.IndexFunc(c.Points, func(p TIPoint) bool { return p.Concurrency == pt.Concurrency })
	if k < 0 {
		c.Points = append(c.Points, TIPoint{Concurrency: pt.Concurrency})
		k = len(c.Points) - 1
	}
	p, m := &c.Points[k], float64(n)
	p.Interactivity += (pt.Interactivity - p.Interactivity) / m
	p.ThroughputPerGPU += (pt.ThroughputPerGPU - p.ThroughputPerGPU) / m
}

// sweepCurves groups the rows by every varied column but the rate and the
// seed, one curve per group in order of first appearance; rows of a group
// at the same rate (replicas) are averaged. Columns that hold one value
// in every row name no curve; when the names would be cut, the curves
// are named by their values under a legend title (see rowLabels). With
// two or more such columns, the first sets a curve's colour and the
// others its dashes and marker (see styleIndices).
func sweepCurves(t *sweepTable, rate int) ([]Curve, error) {
	cols := varyingColumns(t.values, rate, slices.Index(t.varied, "seed"))
	names, title := rowLabels(shortNames(t.varied), t.values, cols)
	hue, variant := styleIndices(t.values, cols)
	var curves []Curve
	index := map[string]int{}     // group name → curve
	count := map[[2]float64]int{} // (curve, rate) → rows averaged into the point
	for i, vals := range t.values {
		x, err := parseRate(vals[rate])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %s: %w", t.path, t.lines[i], t.varied[rate], err)
		}
		c, ok := index[names[i]]
		if !ok {
			c = len(curves)
			index[names[i]] = c
			cv := Curve{Name: orElse(names[i], "all points"), RateLabel: rateAxisLabel(t.varied[rate]), LegendTitle: title}
			if hue != nil {
				cv.Hue, cv.Variant = hue[i], variant[i]
			}
			curves = append(curves, cv)
		}
		key := [2]float64{float64(c), x}
		count[key]++
		addToMean(&curves[c], x, t.attainment[i], t.requestGoodputRPS[i], count[key])
	}
	return curves, nil
}

// addToMean folds one row into c's point at rate x, the n-th averaged
// into it, adding the point if it is the first.
func addToMean(c *Curve, x, attainment, requestGoodputRPS float64, n int) {
	k := slices.IndexFunc(c.Points, func(p CurvePoint) bool { return p.Rate == x })
	if k < 0 {
		c.Points = append(c.Points, CurvePoint{Rate: x})
		k = len(c.Points) - 1
	}
	p, m := &c.Points[k], float64(n)
	p.Attainment += (attainment - p.Attainment) / m
	p.RequestGoodputRPS += (requestGoodputRPS - p.RequestGoodputRPS) / m
}

// numericColumn is the first varied column but the seed whose values are
// all numbers, or -1.
func numericColumn(t *sweepTable) int {
	for c, path := range t.varied {
		if path == "seed" {
			continue
		}
		numeric := len(t.values) > 0
		for _, vals := range t.values {
			if _, err := strconv.ParseFloat(strings.TrimSpace(vals[c]), 64); err != nil {
				numeric = false
				break
			}
		}
		if numeric {
			return c
		}
	}
	return -1
}

// rateColumn returns the index of the varied column that sets the request
// rate — one whose last path element has a word "rate" ("rate_scale",
// "rate"), workload.* first — or -1.
func rateColumn(varied []string) int {
	best := -1
	for i, path := range varied {
		last := path[strings.LastIndex(path, ".")+1:]
		if !slices.Contains(strings.Split(last, "_"), "rate") {
			continue
		}
		if strings.HasPrefix(path, "workload.") {
			return i
		}
		if best < 0 {
			best = i
		}
	}
	return best
}

// rateAxisLabel names the rate axis after its column.
func rateAxisLabel(path string) string {
	if strings.HasSuffix(path, "rate_scale") {
		return "rate scale (× the workload's request rate)"
	}
	return defaultRateLabel
}

// parseRate reads a rate value: a number, optionally with /s, /min or /h
// (converted to per s).
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	div := 1.0
	for _, u := range []struct {
		suffix string
		perS   float64
	}{{"/s", 1}, {"/min", 60}, {"/h", 3600}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, div = strings.TrimSpace(rest), u.perS
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !finite(v) {
		return 0, fmt.Errorf("not a rate: %q", s)
	}
	return v / div, nil
}

// shortNames returns each path's shortest tail of whole elements that no
// other path ends with, keeping a pool's name: workload.rate_scale →
// rate_scale, pools.decode.engine.max_num_seqs → decode.max_num_seqs.
func shortNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		elems := strings.Split(p, ".")
		k := len(elems) - 1
		for ; k > 0; k-- {
			tail := "." + strings.Join(elems[k:], ".")
			if !slices.ContainsFunc(paths, func(q string) bool { return q != p && strings.HasSuffix("."+q, tail) }) {
				break
			}
		}
		out[i] = strings.Join(elems[k:], ".")
		if elems[0] == "pools" && len(elems) > 2 && k > 1 {
			out[i] = elems[1] + "." + out[i]
		}
	}
	return out
}

// orElse returns s, or alt when s is empty.
func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// columnIndex returns the positions of the named columns in header.
func columnIndex(path string, header []string, names ...string) ([]int, error) {
	idx := make([]int, len(names))
	for i, name := range names {
		idx[i] = slices.Index(header, name)
		if idx[i] < 0 {
			return nil, fmt.Errorf("%s:1: no %s column", path, name)
		}
	}
	return idx, nil
}
