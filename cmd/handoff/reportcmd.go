package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"handoff/results/outdir"
	"handoff/results/report"
)

// reportOptions are the arguments and flags of `handoff report`.
type reportOptions struct {
	dir     string // the output directory reported on
	outFile string // the HTML file; "" means dir/report.html
}

// reportFile is the default name of the report, inside the directory.
const reportFile = "report.html"

// newReportCmd builds `handoff report`. runF nil means runReport.
func newReportCmd(stdout io.Writer, runF func(*reportOptions, io.Writer) error) *cobra.Command {
	if runF == nil {
		runF = runReport
	}
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report DIR [-o FILE.html]",
		Short: "Write one self-contained HTML report of a run, sweep, goodput or plan directory",
		Long: "report reads the files a command saved in DIR, without simulating anything, and writes one HTML\n" +
			"page that fetches nothing (styles, the table-sorting script and the SVG plots are inline): the\n" +
			"scenario and fleet, the summary, SLO attainment and goodput, where the time goes by component and\n" +
			"by owner, preemptions and cascades, per-instance utilization and the plots; for a sweep, its points\n" +
			"in a table sortable by any column. Hover a figure's name for its definition.\n\n" +
			"DIR must hold " + report.Expected() + "; any other directory is an error (exit status 1).",
		Example: "  handoff run scenarios/quickstart.yaml -o out && handoff report out\n" +
			"  handoff report out/sweep -o sweep.html",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.dir = args[0]
			return runF(opts, stdout)
		},
	}
	cmd.Flags().StringVarP(&opts.outFile, "out", "o", "", "write the report to `FILE.html` (default: DIR/"+reportFile+")")
	return cmd
}

// runReport writes the report of opts.dir.
func runReport(opts *reportOptions, stdout io.Writer) error {
	if _, err := report.Kind(opts.dir); err != nil {
		return err
	}
	out := opts.outFile
	if out == "" {
		out = filepath.Join(opts.dir, reportFile)
	}
	if err := outdir.CheckFile("-o", out); err != nil {
		return err
	}
	err := outdir.WriteIn(filepath.Dir(out), filepath.Base(out), func(w io.Writer) error { return report.Write(w, opts.dir) })
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "report written to %s\n", out)
	return err
}
