package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/sweep"
)

// A sweep directory holds:
//
//	sweep.json                 the manifest: which scenario and points this is
//	results.csv                one row per point of the last run (or merge)
//	points/<id>/point.json     the point's index, id and overrides
//	points/<id>/scenario.yaml  its effective scenario
//	points/<id>/summary.json   its summary; written last: present = finished
//
// Every file is written through writeIn (outfiles.go): to a temporary
// name, then renamed, so a killed run never leaves a half-written file
// under a real name; and inside DIR only.

const (
	sweepManifestFile = "sweep.json"
	sweepResultsFile  = "results.csv"
	sweepPointsDir    = "points"
	pointSummaryFile  = "summary.json"
)

// sweepLayoutVersion changes when the layout or the point expansion does.
const sweepLayoutVersion = 1

// sweepManifest is sweep.json: the identity of a sweep and its full point list
// (all shards), so that merge needs nothing else.
type sweepManifest struct {
	Version        int           `json:"version"`
	Scenario       string        `json:"scenario"`        // the scenario's name
	ScenarioSHA256 string        `json:"scenario_sha256"` // of the base's effective YAML, sweep block removed
	PointsSHA256   string        `json:"points_sha256"`   // of the point list's JSON
	Columns        []string      `json:"columns"`         // the varied paths
	Points         []sweep.Point `json:"points"`
}

// sweepDifference says how sweep a, held by aName, differs from sweep b, held
// by bName; "" when they are the same sweep.
func sweepDifference(a, b *sweepManifest, aName, bName string) string {
	switch {
	case a.Version != b.Version:
		return fmt.Sprintf("%s has sweep layout version %d, %s %d", aName, a.Version, bName, b.Version)
	case a.Scenario != b.Scenario:
		return fmt.Sprintf("%s holds scenario %q, %s %q", aName, a.Scenario, bName, b.Scenario)
	case a.ScenarioSHA256 != b.ScenarioSHA256:
		return fmt.Sprintf("%s and %s hold different versions of scenario %q (its file or --set differ)", aName, bName, a.Scenario)
	case a.PointsSHA256 != b.PointsSHA256:
		return fmt.Sprintf("%s holds other points (%d varying %v) than %s (%d varying %v)",
			aName, len(a.Points), a.Columns, bName, len(b.Points), b.Columns)
	}
	return ""
}

// readSweepManifest reads dir's sweep.json; it returns fs.ErrNotExist (wrapped)
// when there is none.
func readSweepManifest(dir string) (*sweepManifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, sweepManifestFile))
	if err != nil {
		return nil, err
	}
	var m sweepManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, sweepManifestFile), err)
	}
	return &m, nil
}

// claimSweepDir makes dir ready for sweep m: see checkSweepDir; a fresh directory
// gets m's sweep.json.
func claimSweepDir(dir string, m *sweepManifest) error {
	fresh, err := checkSweepDir(dir, m)
	if err != nil || !fresh {
		return err
	}
	return writeSweepManifest(dir, m)
}

// checkSweepDir reports whether dir can take sweep m, reading only: a missing
// or empty directory can (fresh), as can one that holds the same sweep;
// any other directory is refused, saying why.
func checkSweepDir(dir string, m *sweepManifest) (fresh bool, err error) {
	old, err := readSweepManifest(dir)
	switch {
	case err == nil:
		if why := sweepDifference(old, m, "the directory", "this sweep"); why != "" {
			return false, fmt.Errorf("%s: will not mix results: %s; use another directory", dir, why)
		}
		return false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("%s: not empty and holds no %s, so it is no sweep's output; use another directory", dir, sweepManifestFile)
	}
	return true, nil
}

// writeSweepManifest creates dir and writes its sweep.json.
func writeSweepManifest(dir string, m *sweepManifest) error {
	if err := makeOutDir(dir); err != nil {
		return err
	}
	return writeIn(dir, sweepManifestFile, func(w io.Writer) error { return writeIndentedJSON(w, m) })
}

// pointPath returns the folder of a point's outputs.
func pointPath(dir, id string) string { return filepath.Join(dir, sweepPointsDir, id) }

// pointRel returns the folder of a point's outputs inside the sweep's.
func pointRel(id string) string { return sweepPointsDir + "/" + id }

// pointFinished reports whether the point's summary is in dir.
func pointFinished(dir, id string) bool {
	_, err := os.Stat(filepath.Join(pointPath(dir, id), pointSummaryFile))
	return err == nil
}

// writePoint writes a point's files, the summary last.
func writePoint(dir string, p sweep.Point, l *scenarios.Loaded, sum results.Summary) error {
	removeTemps(dir, pointRel(p.ID))
	eff, err := l.Effective(pointPath(dir, p.ID))
	if err != nil {
		return err
	}
	return writePointFiles(dir, p, eff, func(w io.Writer) error { return results.WriteJSON(w, sum) })
}

// writePointFiles writes point.json, scenario.yaml (eff) and summary.json
// (by writeSummary) into p's folder in dir, in that order.
func writePointFiles(dir string, p sweep.Point, eff []byte, writeSummary func(io.Writer) error) error {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"point.json", func(w io.Writer) error { return writeIndentedJSON(w, p) }},
		{"scenario.yaml", func(w io.Writer) error { _, err := w.Write(eff); return err }},
		{pointSummaryFile, writeSummary},
	}
	for _, f := range files {
		if err := writeIn(dir, pointRel(p.ID)+"/"+f.name, f.write); err != nil {
			return err
		}
	}
	return nil
}

// readPointSummary reads a point's summary.json from dir.
func readPointSummary(dir, id string) (results.Summary, error) {
	path := filepath.Join(pointPath(dir, id), pointSummaryFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return results.Summary{}, err
	}
	var s results.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return results.Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// writeIndentedJSON writes v as indented JSON with a trailing newline.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
