package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"handoff/scenarios"
	"handoff/scenarios/sweep"
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

// runMerge merges the shard directories into opts.outDir.
func runMerge(opts *mergeOptions, stdout io.Writer) error {
	if err := checkOutDir("-o", opts.outDir); err != nil {
		return err
	}
	m, sources, err := planMerge(opts.dirs)
	if err != nil {
		return err
	}
	out := opts.outDir
	if err := claimSweepDir(out, m); err != nil {
		return err
	}
	copied := 0
	for i, p := range m.Points {
		if pointFinished(out, p.ID) {
			continue
		}
		if err := copyPoint(sources[i], out, p); err != nil {
			return err
		}
		copied++
	}
	drops, err := writeResults(out, m.Columns, m.Points)
	if err != nil {
		return err
	}
	if !opts.noPlots {
		if err := drawPlots(out); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "merge %s: %d points from %d directories (%d copied); results in %s\n",
		m.Scenario, len(m.Points), len(opts.dirs), copied, filepath.Join(out, sweepResultsFile))
	return incomplete(drops.err())
}

// planMerge reads the directories' manifests, checks they are one sweep,
// and finds a finished copy of every point: sources[i] is the directory
// of m.Points[i] (the first that has it). Nothing is written.
func planMerge(dirs []string) (m *sweepManifest, sources []string, err error) {
	for _, dir := range dirs {
		dm, err := readSweepManifest(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no %s: not a sweep's output directory", dir, sweepManifestFile)
		}
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			m = dm
		} else if why := sweepDifference(dm, m, dir, dirs[0]); why != "" {
			return nil, nil, fmt.Errorf("will not merge: %s", why)
		}
	}
	sources = make([]string, len(m.Points))
	missing, first := 0, -1
	for i, p := range m.Points {
		for _, dir := range dirs {
			if pointFinished(dir, p.ID) {
				sources[i] = dir
				break
			}
		}
		if sources[i] == "" {
			if missing++; first < 0 {
				first = i
			}
		}
	}
	if missing > 0 {
		return nil, nil, fmt.Errorf("will not merge: %d of %d points are finished in none of the directories, "+
			"the first %s; run (or resume) their shards first", missing, len(m.Points), describePoint(m.Points[first]))
	}
	return m, sources, nil
}

// copyPoint copies a finished point from src to dst. The effective
// scenario is loaded and written again so that its relative paths resolve
// from the new folder; the summary is copied as it is, last.
func copyPoint(src, dst string, p sweep.Point) error {
	from, to := pointPath(src, p.ID), pointPath(dst, p.ID)
	l, err := scenarios.Load(filepath.Join(from, "scenario.yaml"))
	if err != nil {
		return err
	}
	removeTemps(dst, pointRel(p.ID))
	eff, err := l.Effective(to)
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(from, pointSummaryFile))
	if err != nil {
		return err
	}
	return writePointFiles(dst, p, eff, func(w io.Writer) error { _, err := w.Write(sum); return err })
}
