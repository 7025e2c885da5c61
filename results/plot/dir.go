package plot

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
func DrawDir(dir string, save Save) error { return DrawDirChoosing(dir, save, nil, Choice{}) }

// Remove deletes the file rel (slash-separated, in the directory drawn),
// if it is there.
type Remove func(rel string) error

// DrawDirChoosing is DrawDir with the sweep's attribution bars chosen by
// c. A choice on a run's directory (one bar: nothing to choose), or one
// that selects an id no point of the sweep has, is an error. When remove
// is not nil, the attribution pages an earlier drawing left that this one
// does not rewrite (attribution_2.png after fewer bars were chosen) are
// removed through it, so that plots/ shows only what was drawn.
func DrawDirChoosing(dir string, save Save, remove Remove, c Choice) error {
	var figs []figure
	var err error
	switch {
	case sweepdir.IsSweep(dir):
		figs, err = sweepFigures(dir, c)
	case rundir.Has(dir, summaryJSON):
		if c.chooses() {
			return fmt.Errorf("%s is a run's directory: --select and --top apply to sweeps (they choose which points' attribution bars to draw)", dir)
		}
		figs, err = runFigures(dir)
	default:
		return fmt.Errorf("%s: no %s (a sweep) or %s (a run) to plot", dir, sweepCSV, summaryJSON)
	}
	if err != nil {
		return err
	}
	if err := writeFigures(save, figs); err != nil {
		return err
	}
	if remove == nil {
		return nil
	}
	return removeStalePages(dir, figs, remove)
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

// removeStalePages removes, through remove, the attribution plots in
// dir/plots that figs does not hold: the pages of an earlier drawing that
// had more bars.
func removeStalePages(dir string, figs []figure, remove Remove) error {
	entries, err := os.ReadDir(filepath.Join(dir, plotsDir))
	if err != nil {
		return nil // nothing drawn there: nothing stale
	}
	drawn := map[string]bool{}
	for _, f := range figs {
		drawn[f.name] = true
	}
	for _, e := range entries {
		base, ext, _ := strings.Cut(e.Name(), ".")
		if (ext == string(PNG) || ext == string(SVG)) && isAttributionPage(base) && !drawn[base] {
			if err := remove(plotsDir + "/" + e.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}

// isAttributionPage reports whether base is the name attributionFigures
// gives a page: attribution or attribution_owner, then _N for page N ≥ 2.
func isAttributionPage(base string) bool {
	rest, ok := strings.CutPrefix(base, "attribution")
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "_owner")
	if rest == "" {
		return true
	}
	n, ok := strings.CutPrefix(rest, "_")
	page, err := strconv.Atoi(n)
	return ok && err == nil && page >= 2 && strconv.Itoa(page) == n
}
