package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"handoff/results/plot"
)

// newPlotCmd builds `handoff plot`. drawF re-draws a directory's plots;
// nil means plot.DrawDir, writing through writeIn (tests pass their own to
// check parsing).
func newPlotCmd(stdout io.Writer, drawF func(dir string) error) *cobra.Command {
	if drawF == nil {
		drawF = func(dir string) error { return plot.DrawDir(dir, saveIn(dir)) }
	}
	return &cobra.Command{
		Use:   "plot DIR",
		Short: "Re-draw the plots of a saved run or sweep directory",
		Long: "plot reads the results a run (-o DIR) or a sweep saved in DIR, without simulating anything,\n" +
			"and writes PNG and SVG plots into DIR/plots: for a sweep (results.csv), SLO attainment and\n" +
			"request goodput against the request rate and where the time goes per point; for a run\n" +
			"(summary.json), the TTFT and TPOT distributions against the SLO and where the time goes by\n" +
			"component and owner.",
		Example: "  handoff run scenarios/quickstart.yaml -o out && handoff plot out",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := drawF(args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(stdout, "plots written to %s\n", filepath.Join(args[0], "plots"))
			return err
		},
	}
}
