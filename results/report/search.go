package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"handoff/results"
)

// goodputPage builds the report of a goodput search directory (handoff
// goodput -o DIR): both max goodputs read off goodput.csv, the measured
// curve as a sortable table, and plots/goodput.svg.
func goodputPage(dir string) (*page, error) {
	c, err := readCSV(filepath.Join(dir, goodputFile))
	if err != nil {
		return nil, err
	}
	noun := probeDeviceNoun(dir)
	strict, err := highestMet(c, "meets", noun)
	if err != nil {
		return nil, err
	}
	loose, err := highestMet(c, "meets_each", noun)
	if err != nil {
		return nil, err
	}
	figs, err := savedFigures(dir, "goodput")
	if err != nil {
		return nil, err
	}
	sec := section{ID: "goodput", Title: "SLO attainment and both goodputs", Def: definitions["max_goodput"],
		Facts: []fact{{"max goodput", strict, definitions["max_goodput"]},
			{"max goodput, DistServe's variant", loose, definitions["max_goodput_each"]}},
		Notes: []string{"Each row of goodput.csv is one run at one offered rate; its request goodput is that run's."}}
	return &page{Title: "goodput search", Kind: "goodput search", Dir: dir, Sections: []section{sec,
		{ID: "curve", Title: "Measured rates", Def: "one run per offered rate the bisection tried",
			Tables: []table{c.table("curve", "goodput.csv", 0)}, Figures: figs}}}, nil
}

// highestMet states the highest rate_rps of c whose column flag is
// "true", with its figure per device (called noun); "none" when no rate
// met the target.
func highestMet(c *csvFile, flag, noun string) (string, error) {
	rate, gpus, f := c.col("rate_rps"), c.col("gpus"), c.col(flag)
	if rate < 0 || f < 0 {
		return "", fmt.Errorf("%s:1: no rate_rps or %s column", c.path, flag)
	}
	best, bestGPUs := -1.0, 0.0
	for i, row := range c.rows {
		if row[f] != "true" {
			continue
		}
		v, err := c.float(i, rate)
		if err != nil {
			return "", err
		}
		if v > best {
			best = v
			if gpus >= 0 {
				if bestGPUs, err = c.float(i, gpus); err != nil {
					return "", err
				}
			}
		}
	}
	if best < 0 {
		return "none: the target is missed at every rate tried", nil
	}
	s := fmt.Sprintf("%.4g req/s", best)
	if bestGPUs > 0 {
		s += fmt.Sprintf(", %.4g req/s per %s over %s", best/bestGPUs, noun, results.Devices(int(bestGPUs), noun))
	}
	return s, nil
}

// probeDeviceNoun returns what the devices of a goodput search's fleet
// are called, as the summary of its first saved run records it ("GPU",
// "wafer"); "device" when no run says (goodput.csv does not).
func probeDeviceNoun(dir string) string {
	sums, _ := filepath.Glob(filepath.Join(dir, results.ProbesDir, "*", results.SummaryFile))
	if len(sums) == 0 {
		return (&results.Summary{}).DeviceNoun()
	}
	s, err := results.ReadSummary(sums[0])
	if err != nil {
		return (&results.Summary{}).DeviceNoun()
	}
	return s.DeviceNoun()
}

// planPage builds the report of a plan directory (handoff plan -o DIR):
// the chosen fleet, every fleet run as a sortable table, and
// plots/pareto.svg.
func planPage(dir string) (*page, error) {
	c, err := readCSV(filepath.Join(dir, planFile))
	if err != nil {
		return nil, err
	}
	figs, err := savedFigures(dir, "pareto")
	if err != nil {
		return nil, err
	}
	all := c.table("fleets", "plan.csv", 2, "mark", "attainment", "request_goodput_rps")
	sec := section{ID: "plan", Title: "Chosen fleet", Def: definitions["mark"]}
	if ch, ok := chosenFleet(all); ok {
		sec.Tables = []table{ch}
	} else {
		sec.Notes = []string{"None of the fleets run served the rate within the SLO."}
	}
	return &page{Title: "plan", Kind: "plan", Dir: dir, Sections: []section{sec,
		{ID: "fleets", Title: "Fleets run", Def: "every fleet the search ran, cheapest first",
			Tables: []table{all}, Figures: figs}}}, nil
}

// chosenFleet returns the rows of the fleets' table marked chosen, as a
// table of their own; ok is false when there is none.
func chosenFleet(all table) (table, bool) {
	ch := table{ID: "chosen", Caption: "the cheapest fleet that serves the rate within the SLO", Head: all.Head}
	mark := slices.IndexFunc(all.Head, func(h cell) bool { return h.Text == "mark" })
	for _, row := range all.Rows {
		if mark >= 0 && strings.HasPrefix(row[mark].Text, "chosen") {
			ch.Rows = append(ch.Rows, row)
		}
	}
	return ch, len(ch.Rows) > 0
}

// savedFigures returns the saved plot name, or none when it is missing.
func savedFigures(dir, name string) ([]figure, error) {
	fig, ok, err := savedPlot(dir, name)
	if err != nil || !ok {
		return nil, err
	}
	return []figure{fig}, nil
}
