package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"handoff/results"
	"handoff/results/sweepdir"
)

// sweepPage builds the report of a sweep directory (handoff sweep -o DIR,
// or handoff merge): results.csv as a sortable table, sweep.json's
// identity, the first point's scenario and fleet, and the plots DrawDir
// draws.
func sweepPage(dir string) (*page, error) {
	res, err := sweepdir.ReadResults(dir)
	if err != nil {
		return nil, err
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	figs, err := drawnPlots(dir)
	if err != nil {
		return nil, err
	}
	p := &page{Title: "sweep " + orDash(m.Scenario), Kind: "sweep", Dir: dir}
	over, err := sweepOverview(res, m)
	if err != nil {
		return nil, err
	}
	p.Sections = append(p.Sections, over)
	if first, ok, err := firstPoint(dir, res); err != nil {
		return nil, err
	} else if ok {
		p.Sections = append(p.Sections, first)
	}
	p.Sections = append(p.Sections,
		section{ID: "points", Title: "Points", Def: definitions["points"], Tables: []table{resultsCSV(res).table("points", "results.csv", 1+len(m.Columns), sweepLead()...)}},
		section{ID: "plots", Title: "Plots", Def: "the sweep's plots, as handoff plot draws them", Figures: figs})
	return p, nil
}

// sweepLead are the results.csv columns a sweep's table shows first,
// after the id and the varied columns.
func sweepLead() []string {
	return []string{"attainment", "slo_met", "request_goodput_rps", "request_goodput_rps_per_gpu", "throughput_rps",
		"ttft_p90_s", "tpot_p90_s", "output_tokens_per_s_per_gpu", "interactivity_tokens_per_s_per_user", "preemptions"}
}

// resultsCSV is a sweep's results.csv, as sweepdir read it, for the
// sortable table: column 0 is the point id.
func resultsCSV(t *sweepdir.Table) *csvFile {
	c := &csvFile{path: t.Path, header: slices.Concat([]string{"id"}, t.Varied, t.Figures)}
	for _, r := range t.Rows {
		c.rows = append(c.rows, slices.Concat([]string{r.ID}, r.Values, r.Figures))
	}
	return c
}

// readManifest reads dir's sweep.json; a missing one (a results.csv on
// its own) gives the zero manifest.
func readManifest(dir string) (*sweepdir.Manifest, error) {
	m, err := sweepdir.ReadManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &sweepdir.Manifest{}, nil
	}
	return m, err
}

// sweepOverview names the sweep and what it varies, and picks out the
// points that met the SLO and the one with the highest request goodput.
func sweepOverview(res *sweepdir.Table, m *sweepdir.Manifest) (section, error) {
	sec := section{ID: "sweep", Title: "Sweep", Def: "a grid (or zip) of overrides of one scenario, one run per point"}
	sec.Facts = []fact{{"scenario", orDash(m.Scenario), Define("scenario_name")}, {"shard", orDash(m.Shard), Define("shard")},
		{"varied", orDash(strings.Join(m.Columns, ", ")), definitions["varied"]},
		{"points", fmt.Sprintf("%d in results.csv of %d", len(res.Rows), len(m.Points)), definitions["points"]}}
	met, good := res.Figure("slo_met"), res.Figure("request_goodput_rps")
	if met < 0 || good < 0 {
		return sec, nil
	}
	n, best, bestRPS := 0, -1, 0.0
	for i, row := range res.Rows {
		if row.Figures[met] == "true" {
			n++
		}
		v, err := strconv.ParseFloat(row.Figures[good], 64)
		if err != nil {
			return sec, fmt.Errorf("%s:%d: column request_goodput_rps: not a number: %q", res.Path, row.Line, row.Figures[good])
		}
		if best < 0 || v > bestRPS {
			best, bestRPS = i, v
		}
	}
	sec.Facts = append(sec.Facts, fact{"met the SLO", fmt.Sprintf("%d of %d points", n, len(res.Rows)), Define("slo_met")})
	if best >= 0 {
		sec.Facts = append(sec.Facts, fact{"highest request goodput",
			fmt.Sprintf("%.4g req/s at point %s", bestRPS, res.Rows[best].ID), Define("request_goodput_rps")})
	}
	return sec, nil
}

// firstPoint is the scenario and fleet of the first point in results.csv
// whose summary.json is there; ok is false when none is.
func firstPoint(dir string, res *sweepdir.Table) (section, bool, error) {
	ids := make([]string, len(res.Rows))
	for i, row := range res.Rows {
		ids[i] = row.ID
	}
	slices.Sort(ids)
	for _, pid := range ids {
		pdir := sweepdir.PointPath(dir, pid)
		sum, err := results.ReadSummary(filepath.Join(pdir, summaryFile))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return section{}, false, err
		}
		sc, err := readScenario(pdir)
		if err != nil {
			return section{}, false, err
		}
		sec := scenarioSection(sum, sc)
		sec.Title = "Scenario and fleet of point " + pid
		sec.Notes = []string{"The first point's; the other points differ in the varied fields."}
		return sec, true, nil
	}
	return section{}, false, nil
}
