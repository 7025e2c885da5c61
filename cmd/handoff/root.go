package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newRootCmd builds the command tree.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "handoff",
		Short: "Simulate disaggregated LLM serving clusters",
		Long: "handoff is a discrete-event simulator of prefill/decode-disaggregated LLM serving.\n" +
			"It runs scenario files and reports TTFT, TPOT, request goodput and where the time went.\n\n" +
			"Exit status: 0 finished, every request served; 2 finished and wrote its outputs, but some\n" +
			"requests were dropped or some sweep points failed; 1 any other error.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCmd(stdout, stderr, nil), newValidateCmd(stdout), newCatalogCmd(stdout), newCalibrateCmd(stdout, stderr),
		newPlotCmd(stdout, nil), newSweepCmd(stdout, stderr, nil), newMergeCmd(stdout, nil),
		newGoodputCmd(stdout, nil), newPlanCmd(stdout, nil))
	root.AddCommand(newReportCmd(stdout, nil))
	return root
}
