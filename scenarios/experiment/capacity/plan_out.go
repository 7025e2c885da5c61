package capacity

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/results/plot"
)

// sorted returns the runs in the search's order of preference (price,
// then GPUs, then the plan's order), with each run's mark: "chosen",
// "front" (on the cost-vs-request-goodput Pareto front), both, or "".
func (p *Planner) sorted() ([]planRun, []string) {
	runs := slices.Clone(p.ran)
	slices.SortStableFunc(runs, func(a, b planRun) int {
		switch {
		case p.space.Less(a.fleet, b.fleet):
			return -1
		case p.space.Less(b.fleet, a.fleet):
			return 1
		}
		return 0
	})
	marks := make([]string, len(runs))
	for _, i := range plot.ParetoFront(p.costPoints(runs)) {
		marks[i] = "front"
	}
	for i, r := range runs {
		if p.isChosen(r) {
			marks[i] = strings.TrimSuffix("chosen, "+marks[i], ", ")
		}
	}
	return runs, marks
}

func (p *Planner) isChosen(r planRun) bool {
	return p.choice.Found && r.fleet.Key() == p.choice.Fleet.Key()
}

// costPoints returns the runs as points of the cost-vs-request-goodput plot.
func (p *Planner) costPoints(runs []planRun) []plot.CostPoint {
	pts := make([]plot.CostPoint, len(runs))
	for i, r := range runs {
		pts[i] = plot.CostPoint{Label: p.shortName(r), CostPerH: r.costPerHour, RequestGoodputRPS: r.RequestGoodputRPS, Chosen: p.isChosen(r)}
	}
	return pts
}

// shortName names a fleet in a plot label, each pool by its name:
// "prefill 2×h100-sxm + decode 3×h200/tp2".
func (p *Planner) shortName(r planRun) string {
	parts := make([]string, len(p.space.Pools))
	for i, ps := range p.space.Pools {
		v := ps.Variants[r.fleet.Variant[i]]
		parts[i] = fmt.Sprintf("%s %d×%s", ps.Name, r.fleet.Count[i], v.Hardware)
		if v.TP > 1 {
			parts[i] += "/tp" + strconv.Itoa(v.TP)
		}
		if v.PP > 1 {
			parts[i] += "/pp" + strconv.Itoa(v.PP)
		}
	}
	return strings.Join(parts, " + ")
}

// gridSize is the number of fleets in the search space.
func (p *Planner) gridSize() int {
	n := 1
	for _, ps := range p.space.Pools {
		n *= len(ps.Variants) * (ps.MaxCount - ps.MinCount + 1)
	}
	return n
}

// WriteTable prints every fleet run, the Pareto front and the choice.
func (p *Planner) WriteTable(w io.Writer) error {
	how := "pruned search; --exhaustive runs them all"
	if p.opts.Exhaustive {
		how = "exhaustive"
	}
	fmt.Fprintf(w, "plan for %s: serve %g req/s (%.3g× the workload's %.4g req/s) with attainment ≥ %s\n",
		p.name, p.opts.TargetRate, p.opts.TargetRate/p.baseRPS, p.baseRPS, percentText(p.target))
	fmt.Fprintf(w, "ran %d of %d fleets (%s)\n\n", len(p.ran), p.gridSize(), how)
	runs, marks := p.sorted()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "$/h\t%ss\tfleet\tattainment\trequest goodput req/s\tTTFT p90\tTPOT p90\t\n", p.device)
	for i, r := range runs {
		fmt.Fprintf(tw, "%.2f\t%d\t%s\t%s\t%.4g\t%s\t%s\t%s\n", r.costPerHour, r.GPUs, p.space.Describe(r.fleet),
			percentText(r.Attainment), r.RequestGoodputRPS, millisText(r.TTFTP90S), millisText(r.TPOTP90S), marks[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nPareto front, cost against request goodput at %g req/s:\n", p.opts.TargetRate)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, r := range runs {
		if strings.HasSuffix(marks[i], "front") {
			fmt.Fprintf(tw, "  $%.2f/h\t%.4g req/s\t%s\n", r.costPerHour, r.RequestGoodputRPS, p.space.Describe(r.fleet))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return p.writeChoice(w)
}

// writeChoice prints the chosen fleet, or that there is none.
func (p *Planner) writeChoice(w io.Writer) error {
	c := p.choice
	if !c.Found {
		_, err := fmt.Fprintf(w, "\nchosen: none of the fleets run reached %s\n", percentText(p.target))
		return err
	}
	r := p.ran[p.runs[c.Fleet.Key()]]
	_, err := fmt.Fprintf(w, "\nchosen: %s: $%.2f/h for %s, attainment %s, request goodput %.4g req/s (%.4g per %s)\n",
		p.space.Describe(c.Fleet), c.CostPerHour, results.Devices(r.GPUs, p.device), percentText(r.Attainment), r.RequestGoodputRPS,
		r.RequestGoodputRPS/float64(max(r.GPUs, 1)), p.device)
	return err
}

// WriteFiles writes plan.csv into dir and the cost-vs-request-goodput plot as
// dir/plots/pareto.png and .svg.
func (p *Planner) WriteFiles(dir string) error {
	if err := outdir.MakeDir(dir); err != nil {
		return err
	}
	if err := outdir.WriteIn(dir, results.PlanFile, p.writeCSV); err != nil {
		return err
	}
	runs, _ := p.sorted()
	pts := p.costPoints(runs)
	return writePlots(dir, "pareto", func(w io.Writer, f plot.Format) error { return plot.Pareto(w, f, pts) })
}

// writeCSV writes one row per fleet run, in the table's order, with each
// pool's count, hardware and TP in columns of their own.
func (p *Planner) writeCSV(w io.Writer) error {
	header := []string{"cost_per_hour", "gpus"}
	for _, ps := range p.space.Pools {
		header = append(header, ps.Name+"_count", ps.Name+"_hardware", ps.Name+"_tp")
	}
	header = append(header, "rate_rps", "attainment", "ttft_share", "tpot_share", "ttft_p90_s", "tpot_p90_s",
		"request_goodput_rps", "meets", "mark")
	cw := csv.NewWriter(w)
	cw.Write(header)
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }
	runs, marks := p.sorted()
	for i, r := range runs {
		row := []string{f(r.costPerHour), strconv.Itoa(r.GPUs)}
		for j, ps := range p.space.Pools {
			v := ps.Variants[r.fleet.Variant[j]]
			row = append(row, strconv.Itoa(r.fleet.Count[j]), v.Hardware, strconv.Itoa(v.TP))
		}
		row = append(row, f(r.RateRPS), f(r.Attainment), f(r.TTFTShare), f(r.TPOTShare), f(r.TTFTP90S), f(r.TPOTP90S),
			f(r.RequestGoodputRPS), strconv.FormatBool(r.MeetsStrict(p.target)), marks[i])
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// planJSON is the result of `handoff plan --json`: the table's figures.
type planJSON struct {
	Scenario      string        `json:"scenario"`
	TargetRateRPS float64       `json:"target_rate_rps"`
	Target        float64       `json:"target_attainment"`
	Ran           int           `json:"fleets_run"`
	Grid          int           `json:"fleets_in_space"`
	Runs          []planRunJSON `json:"runs"` // in the table's order: price, then GPUs
	Chosen        *planRunJSON  `json:"chosen"`
}

type planRunJSON struct {
	Fleet             string        `json:"fleet"`
	Pools             []planPoolOut `json:"pools"`
	CostPerHour       float64       `json:"cost_per_hour"`
	GPUs              int           `json:"gpus"`
	Attainment        float64       `json:"attainment"`
	RequestGoodputRPS float64       `json:"request_goodput_rps"`
	TTFTP90S          float64       `json:"ttft_p90_s"`
	TPOTP90S          float64       `json:"tpot_p90_s"`
	Meets             bool          `json:"meets"`
	OnFront           bool          `json:"pareto_front"`
}

type planPoolOut struct {
	Name     string `json:"name"`
	Count    int    `json:"count"`
	Hardware string `json:"hardware"`
	TP       int    `json:"tp"`
	PP       int    `json:"pp,omitempty"` // pipeline stages, when more than one
}

// WriteJSON prints the plan as planJSON.
func (p *Planner) WriteJSON(w io.Writer) error {
	out := planJSON{Scenario: p.name, TargetRateRPS: p.opts.TargetRate, Target: p.target, Ran: len(p.ran),
		Grid: p.gridSize(), Runs: []planRunJSON{}}
	runs, marks := p.sorted()
	for i, r := range runs {
		rj := planRunJSON{Fleet: p.space.Describe(r.fleet), CostPerHour: r.costPerHour, GPUs: r.GPUs,
			Attainment: r.Attainment, RequestGoodputRPS: r.RequestGoodputRPS, TTFTP90S: r.TTFTP90S,
			TPOTP90S: r.TPOTP90S, Meets: r.MeetsStrict(p.target), OnFront: strings.HasSuffix(marks[i], "front")}
		for j, ps := range p.space.Pools {
			v := ps.Variants[r.fleet.Variant[j]]
			out := planPoolOut{Name: ps.Name, Count: r.fleet.Count[j], Hardware: v.Hardware, TP: v.TP}
			if v.PP > 1 {
				out.PP = v.PP
			}
			rj.Pools = append(rj.Pools, out)
		}
		out.Runs = append(out.Runs, rj)
		if p.isChosen(r) {
			chosen := rj
			out.Chosen = &chosen
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
