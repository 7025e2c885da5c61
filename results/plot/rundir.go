package plot

import (
	"io"
	"math"
	"path/filepath"

	"handoff/results"
	"handoff/results/rundir"
)

// runFigures returns the plots of a run directory, read through
// results/rundir: latency CDFs (when requests.csv is there), attribution,
// the timelines (timeline.csv) and the fleet (fleet.csv).
func runFigures(dir string) ([]figure, error) {
	sum, err := rundir.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	name := sum.Scenario
	if name == "" {
		name = filepath.Base(dir)
	}
	var figs []figure
	if rundir.Has(dir, requestsCSV) {
		ttft, tpot, err := readLatencies(dir)
		if err != nil {
			return nil, err
		}
		figs = append(figs,
			cdfFigure("ttft_cdf", "TTFT", CDFSeries{Name: name, ValuesS: ttft}, sum.SLO.TTFTS),
			cdfFigure("tpot_cdf", "TPOT", CDFSeries{Name: name, ValuesS: tpot}, sum.SLO.TPOTS))
	}
	figs = append(figs, attributionFigures([]string{name}, []results.Attribution{sum.Attribution}, "")...)
	if rundir.Has(dir, results.TimelineFile) {
		tl, err := timelineFigures(dir)
		if err != nil {
			return nil, err
		}
		figs = append(figs, tl...)
	}
	if rundir.Has(dir, results.FleetFile) {
		pools, err := rundir.ReadFleet(dir)
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{"fleet", func(w io.Writer, f Format) error { return Fleet(w, f, pools, sum.SimTimeS) }})
	}
	return figs, nil
}

// cdfFigure returns the CDF plot of one series.
func cdfFigure(name, metric string, s CDFSeries, sloS float64) figure {
	return figure{name, func(w io.Writer, f Format) error { return LatencyCDF(w, f, []CDFSeries{s}, sloS, metric) }}
}

// readLatencies returns the TTFT and TPOT (s) of the completed requests
// in dir's requests.csv; undefined metrics (empty cells) are skipped.
func readLatencies(dir string) (ttftS, tpotS []float64, err error) {
	err = rundir.ReadRequests(dir, func(r *rundir.Request) {
		if r.Status != results.Completed.String() {
			return
		}
		if !math.IsNaN(r.TTFTS) {
			ttftS = append(ttftS, r.TTFTS)
		}
		if !math.IsNaN(r.TPOTS) {
			tpotS = append(tpotS, r.TPOTS)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return ttftS, tpotS, nil
}
