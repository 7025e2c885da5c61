package capacity

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/results/plot"
	"handoff/scenarios/search"
)

// WriteTable prints the measured curve and both answers.
func (g *GoodputSearch) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "max goodput of %s: target attainment %s, offered rate at scale 1: %.4g req/s, tolerance %g\n\n",
		g.scenario, percentText(g.target), g.baseRPS, g.tolerance)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate req/s\tscale\tattainment\tTTFT ok\tTPOT ok\tTTFT p90\tTPOT p90\trequest goodput req/s\tmeets\t")
	for _, m := range g.curve {
		fmt.Fprintf(tw, "%.4g\t%.4g\t%s\t%s\t%s\t%s\t%s\t%.4g\t%s\t\n", m.RateRPS, m.Scale, percentText(m.Attainment),
			percentText(m.TTFTShare), percentText(m.TPOTShare), millisText(m.TTFTP90S), millisText(m.TPOTP90S), m.RequestGoodputRPS, g.meetsLabel(m))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	gpus := 0
	if len(g.curve) > 0 {
		gpus = g.curve[0].GPUs
	}
	fmt.Fprintln(w)
	if len(g.curve) > 0 && len(g.curve[0].Classes) > 0 {
		g.writeClasses(w)
		fmt.Fprintf(w, "max goodput (every class's TTFT and TPOT met together by ≥ its target share of its requests): %s\n",
			g.answer(g.strict, gpus))
	} else {
		fmt.Fprintf(w, "max goodput (TTFT and TPOT met together by ≥ %s of requests): %s\n", percentText(g.target), g.answer(g.strict, gpus))
	}
	_, err := fmt.Fprintf(w, "max goodput, DistServe's variant (TTFT and TPOT each met by ≥ %s): %s\n", percentText(g.target), g.answer(g.loose, gpus))
	return err
}

// meetsLabel says which criteria a run met: "both" (strict, hence also
// loose), "each" (loose only) or "-".
func (g *GoodputSearch) meetsLabel(m Probe) string {
	switch {
	case m.MeetsStrict(g.target):
		return "both"
	case m.MeetsLoose(g.target):
		return "each"
	}
	return "-"
}

// answer states a bracket as a rate, per device, with its caveats.
func (g *GoodputSearch) answer(br search.Bracket, gpus int) string {
	lo, hi := g.rateOf(br.Lo), g.rateOf(br.Hi)
	var s string
	switch {
	case br.Lo == 0:
		return fmt.Sprintf("none: the target is missed even at %.4g req/s, the lowest rate tried", hi)
	case math.IsInf(hi, 1):
		s = fmt.Sprintf("at least %.4g req/s, the highest rate tried (met at every rate)", lo)
	default:
		s = fmt.Sprintf("%.4g req/s (missed at %.4g)", lo, hi)
	}
	if gpus > 0 {
		s += fmt.Sprintf(", %.4g req/s per %s over %s", lo/float64(gpus), g.device, results.Devices(gpus, g.device))
	}
	if !br.Converged {
		s += fmt.Sprintf("; did not converge within %d runs", br.Runs)
	}
	return s
}

// percentText formats a share as a percentage, with the digits it takes
// to show a miss (see results.Percent).
func percentText(share float64) string { return results.Percent(share) }

// millisText formats seconds as milliseconds.
func millisText(s float64) string { return strconv.FormatFloat(1e3*s, 'f', 1, 64) + "ms" }

// goodputCSVHeader is the first line of goodput.csv.
const goodputCSVHeader = "rate_rps,scale,attainment,ttft_share,tpot_share,ttft_p90_s,tpot_p90_s,request_goodput_rps,gpus,meets,meets_each"

// WriteFiles writes goodput.csv into dir and the attainment-versus-rate
// plot as dir/plots/goodput.png and .svg.
func (g *GoodputSearch) WriteFiles(dir string) error {
	if err := outdir.MakeDir(dir); err != nil {
		return err
	}
	if err := outdir.WriteIn(dir, results.GoodputFile, g.writeCSV); err != nil {
		return err
	}
	return writePlots(dir, "goodput", func(w io.Writer, f plot.Format) error { return plotGoodput(w, f, g) })
}

// writePlots draws one figure as dir/plots/name.png and name.svg.
func writePlots(dir, name string, draw func(io.Writer, plot.Format) error) error {
	for _, f := range []plot.Format{plot.PNG, plot.SVG} {
		if err := outdir.WriteIn(dir, "plots/"+name+"."+string(f), func(w io.Writer) error { return draw(w, f) }); err != nil {
			return err
		}
	}
	return nil
}

// writeCSV writes one row per measured rate, by rate.
func (g *GoodputSearch) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }
	if _, err := io.WriteString(w, goodputCSVHeader+"\n"); err != nil {
		return err
	}
	for _, m := range g.curve {
		cw.Write([]string{f(m.RateRPS), f(m.Scale), f(m.Attainment), f(m.TTFTShare), f(m.TPOTShare), f(m.TTFTP90S),
			f(m.TPOTP90S), f(m.RequestGoodputRPS), strconv.Itoa(m.GPUs), strconv.FormatBool(m.MeetsStrict(g.target)),
			strconv.FormatBool(m.MeetsLoose(g.target))})
	}
	cw.Flush()
	return cw.Error()
}

// plotGoodput draws attainment against rate: both limits together (the
// max goodput's criterion) and each limit on its own (the variant's),
// with the max goodput marked.
func plotGoodput(w io.Writer, f plot.Format, g *GoodputSearch) error {
	curves := []plot.Curve{
		{Name: "TTFT and TPOT together (max goodput)", RateLabel: "arrival rate (req/s)"},
		{Name: "TTFT only"},
		{Name: "TPOT only"},
	}
	for _, m := range g.curve {
		for i, share := range []float64{m.Attainment, m.TTFTShare, m.TPOTShare} {
			curves[i].Points = append(curves[i].Points, plot.CurvePoint{Rate: m.RateRPS, Attainment: share, RequestGoodputRPS: m.RequestGoodputRPS})
		}
	}
	var marks []plot.Mark
	if g.strict.Lo > 0 {
		r := g.rateOf(g.strict.Lo)
		marks = append(marks, plot.Mark{Rate: r, Label: fmt.Sprintf("max goodput %.4g req/s", r)})
	}
	return plot.AttainmentMarked(w, f, curves, g.target, marks)
}

// goodputJSON is the result of `handoff goodput --json`: the table's
// figures, the rates in req/s.
type goodputJSON struct {
	Scenario   string            `json:"scenario"`
	Target     float64           `json:"target"`
	BaseRPS    float64           `json:"offered_rps_at_scale_1"`
	Tolerance  float64           `json:"tolerance"`
	GPUs       int               `json:"gpus"`
	Curve      []goodputPointOut `json:"curve"`
	MaxGoodput goodputAnswerJSON `json:"max_goodput"`      // TTFT and TPOT met together
	Variant    goodputAnswerJSON `json:"max_goodput_each"` // DistServe's variant: each met
}

type goodputPointOut struct {
	RateRPS           float64      `json:"rate_rps"`
	Scale             float64      `json:"scale"`
	Attainment        float64      `json:"attainment"`
	TTFTShare         float64      `json:"ttft_share"`
	TPOTShare         float64      `json:"tpot_share"`
	TTFTP90S          float64      `json:"ttft_p90_s"`
	TPOTP90S          float64      `json:"tpot_p90_s"`
	RequestGoodputRPS float64      `json:"request_goodput_rps"`
	Classes           []ClassProbe `json:"classes,omitempty"` // per traffic class: name, attainment, target
	Meets             bool         `json:"meets"`
	MeetsEach         bool         `json:"meets_each"`
}

// goodputAnswerJSON is one search's answer: the highest rate met (0 when
// none was), the lowest missed (null when every rate tried was met), per
// GPU, and whether the bracket converged within the runs.
type goodputAnswerJSON struct {
	RPS       float64  `json:"rps"`
	MissedRPS *float64 `json:"missed_at_rps"`
	PerGPU    float64  `json:"rps_per_gpu"`
	Converged bool     `json:"converged"`
	Runs      int      `json:"runs"`
}

// WriteJSON prints the search as goodputJSON.
func (g *GoodputSearch) WriteJSON(w io.Writer) error {
	out := goodputJSON{Scenario: g.scenario, Target: g.target, BaseRPS: g.baseRPS, Tolerance: g.tolerance}
	if len(g.curve) > 0 {
		out.GPUs = g.curve[0].GPUs
	}
	for _, m := range g.curve {
		out.Curve = append(out.Curve, goodputPointOut{RateRPS: m.RateRPS, Scale: m.Scale, Attainment: m.Attainment,
			TTFTShare: m.TTFTShare, TPOTShare: m.TPOTShare, TTFTP90S: m.TTFTP90S, TPOTP90S: m.TPOTP90S,
			RequestGoodputRPS: m.RequestGoodputRPS, Classes: m.Classes, Meets: m.MeetsStrict(g.target),
			MeetsEach: m.MeetsLoose(g.target)})
	}
	out.MaxGoodput, out.Variant = g.answerJSON(g.strict, out.GPUs), g.answerJSON(g.loose, out.GPUs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (g *GoodputSearch) answerJSON(br search.Bracket, gpus int) goodputAnswerJSON {
	a := goodputAnswerJSON{Converged: br.Converged, Runs: br.Runs}
	if br.Lo > 0 {
		a.RPS = g.rateOf(br.Lo)
	}
	if hi := g.rateOf(br.Hi); !math.IsInf(hi, 1) {
		a.MissedRPS = &hi
	}
	if gpus > 0 {
		a.PerGPU = a.RPS / float64(gpus)
	}
	return a
}

// writeClasses prints each run's attainment per traffic class against
// the class's target.
func (g *GoodputSearch) writeClasses(w io.Writer) {
	for _, m := range g.curve {
		fmt.Fprintf(w, "at %.4g req/s:", m.RateRPS)
		for _, c := range m.Classes {
			fmt.Fprintf(w, "  %s %s (target %s)", c.Name, percentText(c.Attainment), percentText(c.Target))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
