package plot

import (
	"fmt"
	"io"

	"handoff/results"
	"handoff/results/rundir"
	"handoff/results/sweepdir"
)

// The files DrawDir recognises in a directory.
const (
	sweepCSV    = results.SweepResultsFile // a sweep's table, one row per point
	summaryJSON = results.SummaryFile      // a run's summary
	requestsCSV = results.RequestsFile     // a run's per-request records
	plotsDir    = results.PlotsDir         // where DrawDir writes
)

// Save stores one file of a plot: rel is its slash-separated path in the
// directory drawn ("plots/attainment.png"), and write writes its bytes.
// The caller decides how files are written (handoff's commands write each
// to a temporary name and rename it, inside the directory only).
type Save func(rel string, write func(io.Writer) error) error

// DrawDir re-draws, from saved results only, the plots of a sweep or run
// directory into dir/plots, as PNG and SVG, each file through save:
//
//   - a sweep (results.csv): attainment.* and request_goodput.* against the rate
//     column, one curve per combination of the other varied columns
//     (coloured by the first when there are two or more);
//     throughput_interactivity.* (output tok/s per GPU against tok/s per
//     user, with the Pareto front over all points) when a varied column
//     is workload.client.concurrency, one curve per combination of the
//     other varied columns;
//     attribution.* and attribution_owner.*, one bar per point with a
//     points/<id>/summary.json. Labels leave out columns that hold one
//     value throughout, and list values alone under a header naming the
//     columns when "name=value" labels would be cut;
//   - a run (summary.json): ttft_cdf.* and tpot_cdf.* from requests.csv
//     (if present) with the SLO lines, attribution.* and
//     attribution_owner.*, timeline_pool_<pool>.* and timeline_<instance>.*
//     from timeline.csv, and fleet.* (each pool's instances over time)
//     from fleet.csv when the fleet changed. A run directory is read
//     through results/rundir, which owns its format.
//
// results.csv is read through sweepdir.ReadResults, which says how its
// header splits into varied columns and figures. Errors name the
// file, and the line and column for bad values. Cost: linear in the
// size of the files read.
func DrawDir(dir string, save Save) error { return DrawDirChoosing(dir, save, Choice{}) }

// DrawDirChoosing is DrawDir with the sweep's attribution bars chosen by c.
func DrawDirChoosing(dir string, save Save, c Choice) error {
	var figs []figure
	var err error
	switch {
	case sweepdir.IsSweep(dir):
		figs, err = sweepFigures(dir, c)
	case rundir.Has(dir, summaryJSON):
		figs, err = runFigures(dir)
	default:
		return fmt.Errorf("%s: no %s (a sweep) or %s (a run) to plot", dir, sweepCSV, summaryJSON)
	}
	if err != nil {
		return err
	}
	return writeFigures(save, figs)
}

// figure is one plot to write under a base name, in every format.
type figure struct {
	name string
	draw func(io.Writer, Format) error
}

// writeFigures renders each figure as PNG and SVG and saves them as
// plots/<name>.png and .svg.
func writeFigures(save Save, figs []figure) error {
	for _, fig := range figs {
		for _, f := range []Format{PNG, SVG} {
			rel := plotsDir + "/" + fig.name + "." + string(f)
			if err := save(rel, func(w io.Writer) error { return fig.draw(w, f) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// attributionFigures returns the component and owner attribution plots
// of bars labelled labels, maxBars bars a page (attribution.png, then
// attribution_2.png, … each saying which bars of how many it shows); key,
// if not empty, names what the labels list.
func attributionFigures(labels []string, attrs []results.Attribution, key string) []figure {
	var figs []figure
	for from := 0; from < len(attrs); from += maxBars {
		to := min(from+maxBars, len(attrs))
		comp := make([]AttributionBar, 0, to-from)
		owner := make([]AttributionBar, 0, to-from)
		for i := from; i < to; i++ {
			comp, owner = append(comp, ComponentBar(labels[i], attrs[i])), append(owner, OwnerBar(labels[i], attrs[i]))
		}
		suffix, note := "", ""
		if len(attrs) > maxBars {
			note = fmt.Sprintf(" (bars %d–%d of %d)", from+1, to, len(attrs))
			if from > 0 {
				suffix = fmt.Sprintf("_%d", from/maxBars+1)
			}
		}
		figs = append(figs,
			figure{"attribution" + suffix, func(w io.Writer, f Format) error { return attributionPage(w, f, comp, key, note) }},
			figure{"attribution_owner" + suffix, func(w io.Writer, f Format) error { return attributionPage(w, f, owner, key, note) }})
	}
	return figs
}
