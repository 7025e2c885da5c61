package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"handoff/results/outdir"
	"handoff/results/plot"
)

// newPlotCmd builds `handoff plot`. drawF re-draws a directory's plots
// with the chosen attribution bars; nil means plot.DrawDirChoosing,
// writing and removing through outdir (tests pass their own to check
// parsing).
func newPlotCmd(stdout io.Writer, drawF func(dir string, c plot.Choice) error) *cobra.Command {
	if drawF == nil {
		drawF = func(dir string, c plot.Choice) error {
			remove := func(rel string) error { return outdir.RemoveIn(dir, rel) }
			return plot.DrawDirChoosing(dir, outdir.Saver(dir), remove, c)
		}
	}
	var choice plot.Choice
	cmd := &cobra.Command{
		Use:   "plot DIR",
		Short: "Re-draw the plots of a saved run or sweep directory",
		Long: "plot reads the results a run (-o DIR) or a sweep saved in DIR, without simulating anything,\n" +
			"and writes PNG and SVG plots into DIR/plots: for a sweep (results.csv), SLO attainment and\n" +
			"request goodput against the request rate (or its first numeric varied column) and where the\n" +
			"time goes per point, 30 bars a page; for a run (summary.json), the TTFT and TPOT distributions\n" +
			"against the SLO, where the time goes by component and owner, a timeline per pool and, when\n" +
			"the fleet changed (fleet.csv), each pool's instances over time.",
		Example: "  handoff run scenarios/quickstart.yaml -o out && handoff plot out\n" +
			"  handoff plot out/sweep --top 10",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if choice.Top < 0 {
				return fmt.Errorf("--top must not be negative, got %d", choice.Top)
			}
			if err := drawF(args[0], choice); err != nil {
				return err
			}
			_, err := fmt.Fprintf(stdout, "plots written to %s\n", filepath.Join(args[0], "plots"))
			return err
		},
	}
	cmd.Flags().IntVar(&choice.Top, "top", 0, "a sweep's attribution bars: only the `N` points with the longest mean end-to-end time, slowest first (0: all)")
	cmd.Flags().StringSliceVar(&choice.Select, "select", nil, "a sweep's attribution bars: only the points whose id starts with one of these (`ID,...`)")
	return cmd
}
