package main

import (
	"fmt"
	"handoff/scenarios/experiment/sweeprun"
	"io"

	"github.com/spf13/cobra"
)

// mergeOptions are the flags of `handoff merge`.
type mergeOptions struct {
	dirs    []string
	outDir  string
	noPlots bool
}

// newMergeCmd builds `handoff merge`. runF nil means runMerge.
func newMergeCmd(stdout io.Writer, runF func(*mergeOptions, io.Writer) error) *cobra.Command {
	if runF == nil {
		runF = runMerge
	}
	opts := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge [-o OUT] DIR...",
		Short: "Join the output directories of a sharded sweep",
		Long: "merge checks that the directories hold shards of one sweep, copies every point into OUT\n" +
			"and writes OUT/results.csv (the same bytes an unsharded sweep writes) and the plots.\n" +
			"Every point must be finished in one of the directories. OUT may be one of them; without -o\n" +
			"it is the first directory.",
		Example: "  handoff merge -o out/all out/shard-0 out/shard-1 out/shard-2\n" +
			"  handoff merge out/shard-0 out/shard-1 out/shard-2",
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.dirs = args
			if opts.outDir == "" {
				opts.outDir = args[0]
			}
			return runF(opts, stdout)
		},
	}
	cmd.Flags().StringVarP(&opts.outDir, "out", "o", "", "write the merged sweep into `DIR` (default: the first directory)")
	cmd.Flags().BoolVar(&opts.noPlots, "no-plots", false, "skip the plots")
	return cmd
}

// runMerge merges the shard directories into opts.outDir (sweeprun.Merge)
// and reports it in one line.
func runMerge(opts *mergeOptions, stdout io.Writer) error {
	res, err := sweeprun.Merge(sweeprun.MergeOptions{Dirs: opts.dirs, Out: opts.outDir, NoPlots: opts.noPlots})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merge %s: %d points from %d directories (%d copied); results in %s\n",
		res.Scenario, res.Points, len(opts.dirs), res.Copied, res.Results)
	return incomplete(res.Dropped)
}
