package sweeprun

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/results/sweepdir"
	"handoff/scenarios"
	"handoff/scenarios/sweep"
)

// MergeOptions are what `handoff merge` joins.
type MergeOptions struct {
	Dirs    []string // the shards' sweep directories
	Out     string   // the merged sweep's directory; may be one of Dirs
	NoPlots bool     // skip Out/plots
}

// MergeResult is what a merge reports.
type MergeResult struct {
	Scenario string // the scenario's name
	Points   int    // the sweep's, every shard's
	Copied   int    // those copied into Out (the others were there)
	Dropped  error  // the points whose runs left requests unserved; nil when none did
	Results  string // the path of the table written, Out/results.csv
}

// Merge checks that the directories hold shards of one sweep, copies
// every point into Out and writes Out/results.csv (the same bytes an
// unsharded sweep writes) and the plots. Every point must be finished in
// one of the directories.
func Merge(opts MergeOptions) (*MergeResult, error) {
	if err := outdir.CheckDir("-o", opts.Out); err != nil {
		return nil, err
	}
	m, sources, err := planMerge(opts.Dirs)
	if err != nil {
		return nil, err
	}
	out := opts.Out
	if err := claimMergeDir(out, m); err != nil {
		return nil, err
	}
	res := &MergeResult{Scenario: m.Scenario, Points: len(m.Points), Results: filepath.Join(out, results.SweepResultsFile)}
	for i, p := range m.Points {
		if _, err := sweepdir.ReadSavedPoint(out, p, m.Scenario); err == nil {
			continue
		}
		if err := copyPoint(sources[i], out, p); err != nil {
			return nil, err
		}
		res.Copied++
	}
	drops, err := sweepdir.WriteResults(out, m.Columns, m.Points)
	if err != nil {
		return nil, err
	}
	if !opts.NoPlots {
		if err := drawPlots(out); err != nil {
			return nil, err
		}
	}
	res.Dropped = drops.Err()
	return res, nil
}

// pointSource is where merge finds a point saved whole.
type pointSource struct {
	dir string
	*sweepdir.SavedPoint
}

// planMerge reads the directories' manifests, checks they are shards of
// one sweep, and finds a copy of every point saved whole
// (sweepdir.ReadSavedPoint): sources[i] is that of m.Points[i], from the
// first directory that has one. The points must agree on the content of
// every input they read. m is the manifest of the merged sweep (every
// shard). Nothing is written.
func planMerge(dirs []string) (m *sweepdir.Manifest, sources []pointSource, err error) {
	for _, dir := range dirs {
		dm, err := sweepdir.ReadManifest(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no %s: not a sweep's output directory", dir, results.SweepManifestFile)
		}
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			m = dm
		} else if why := sweepdir.Difference(dm, m, dir, dirs[0], true); why != "" {
			return nil, nil, fmt.Errorf("will not merge: %s", why)
		}
	}
	merged := *m
	merged.Shard = sweep.Shard{}.String()
	sources = make([]pointSource, len(m.Points))
	missing, first := 0, -1
	for i, p := range m.Points {
		for _, dir := range dirs {
			if sp, err := sweepdir.ReadSavedPoint(dir, p, m.Scenario); err == nil {
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
			"the first %s; run (or resume) their shards first", missing, len(m.Points), m.Points[first])
	}
	if err := sameInputs(m, sources); err != nil {
		return nil, nil, err
	}
	return &merged, sources, nil
}

// sameInputs checks that the points, and the sweep's base scenario, read
// every input file with the same content.
func sameInputs(m *sweepdir.Manifest, sources []pointSource) error {
	seen := map[string]string{} // path → hash
	who := map[string]string{}  // path → who read it first
	check := func(files []sweepdir.InputFile, reader string) error {
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
		if err := check(src.Record.Inputs, "point "+m.Points[i].ID+" (in "+src.dir+")"); err != nil {
			return err
		}
	}
	return nil
}

// claimMergeDir makes out ready for the merged sweep m: a missing or empty
// folder, or one that holds a shard of the same sweep (or all of it); its
// sweep.json becomes m's.
func claimMergeDir(out string, m *sweepdir.Manifest) error {
	old, err := sweepdir.ReadManifest(out)
	switch {
	case err == nil:
		if why := sweepdir.Difference(old, m, "the directory", "this sweep", true); why != "" {
			return fmt.Errorf("%s: will not mix results: %s; use another directory", out, why)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	default:
		if _, err := sweepdir.Check(out, m); err != nil {
			return err
		}
	}
	return sweepdir.WriteManifest(out, m)
}

// copyPoint copies the point saved in src to dst. Its effective scenario
// is loaded and written again so that its relative paths resolve from the
// new folder; the summary is copied as it is.
func copyPoint(src pointSource, dst string, p sweep.Point) error {
	from, to := sweepdir.PointPath(src.dir, p.ID), sweepdir.PointPath(dst, p.ID)
	l, err := scenarios.Parse(src.Scenario, filepath.Join(from, results.ScenarioFile))
	if err != nil {
		return err
	}
	sweepdir.RemoveTemps(dst, p.ID)
	eff, err := l.Effective(to)
	if err != nil {
		return err
	}
	return sweepdir.WritePoint(dst, src.Record, eff, src.Summary)
}
