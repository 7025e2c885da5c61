package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"handoff/results/outdir"
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
	if err := outdir.CheckDir("-o", opts.outDir); err != nil {
		return err
	}
	m, sources, err := planMerge(opts.dirs)
	if err != nil {
		return err
	}
	out := opts.outDir
	if err := claimMergeDir(out, m); err != nil {
		return err
	}
	copied := 0
	for i, p := range m.Points {
		if _, err := readSavedPoint(out, p, m.Scenario); err == nil {
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

// pointSource is where merge finds a point saved whole.
type pointSource struct {
	dir string
	*savedPoint
}

// planMerge reads the directories' manifests, checks they are shards of
// one sweep, and finds a copy of every point saved whole
// (readSavedPoint): sources[i] is that of m.Points[i], from the first
// directory that has one. The points must agree on the content of every
// input they read. m is the manifest of the merged sweep (every shard).
// Nothing is written.
func planMerge(dirs []string) (m *sweepManifest, sources []pointSource, err error) {
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
		} else if why := sweepDifference(dm, m, dir, dirs[0], true); why != "" {
			return nil, nil, fmt.Errorf("will not merge: %s", why)
		}
	}
	merged := *m
	merged.Shard = sweep.Shard{}.String()
	sources = make([]pointSource, len(m.Points))
	missing, first := 0, -1
	for i, p := range m.Points {
		for _, dir := range dirs {
			if sp, err := readSavedPoint(dir, p, m.Scenario); err == nil {
				sources[i] = pointSource{dir, sp}
				break
			}
		}
		if sources[i].dir == "" {
			if missing++; first < 0 {
				first = i
			}
		}
	}
	if missing > 0 {
		return nil, nil, fmt.Errorf("will not merge: %d of %d points are saved whole in none of the directories, "+
			"the first %s; run (or resume) their shards first", missing, len(m.Points), describePoint(m.Points[first]))
	}
	if err := sameInputs(m, sources); err != nil {
		return nil, nil, err
	}
	return &merged, sources, nil
}

// sameInputs checks that the points, and the sweep's base scenario, read
// every input file with the same content.
func sameInputs(m *sweepManifest, sources []pointSource) error {
	seen := map[string]string{} // path → hash
	who := map[string]string{}  // path → who read it first
	check := func(files []inputFile, reader string) error {
		for _, f := range files {
			if h, ok := seen[f.Path]; !ok {
				seen[f.Path], who[f.Path] = f.SHA256, reader
			} else if h != f.SHA256 {
				return fmt.Errorf("will not merge: %s and %s read different versions of %s", who[f.Path], reader, f.Path)
			}
		}
		return nil
	}
	if err := check(m.Inputs, "the base scenario"); err != nil {
		return err
	}
	for i, src := range sources {
		if err := check(src.rec.Inputs, "point "+m.Points[i].ID+" (in "+src.dir+")"); err != nil {
			return err
		}
	}
	return nil
}

// claimMergeDir makes out ready for the merged sweep m: a missing or empty
// folder, or one that holds a shard of the same sweep (or all of it); its
// sweep.json becomes m's.
func claimMergeDir(out string, m *sweepManifest) error {
	old, err := readSweepManifest(out)
	switch {
	case err == nil:
		if why := sweepDifference(old, m, "the directory", "this sweep", true); why != "" {
			return fmt.Errorf("%s: will not mix results: %s; use another directory", out, why)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	default:
		if _, err := checkSweepDir(out, m); err != nil {
			return err
		}
	}
	return writeSweepManifest(out, m)
}

// copyPoint copies the point saved in src to dst. Its effective scenario
// is loaded and written again so that its relative paths resolve from the
// new folder; the summary is copied as it is.
func copyPoint(src pointSource, dst string, p sweep.Point) error {
	from, to := pointPath(src.dir, p.ID), pointPath(dst, p.ID)
	l, err := scenarios.Parse(src.scenario, filepath.Join(from, pointScenarioFile))
	if err != nil {
		return err
	}
	outdir.RemoveTemps(dst, pointRel(p.ID))
	eff, err := l.Effective(to)
	if err != nil {
		return err
	}
	return writePointFiles(dst, src.rec, eff, src.summary)
}
