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
	"handoff/results/outdir"
	"handoff/scenarios/sweep"
)

// A sweep directory holds:
//
//	sweep.json                 the manifest: which scenario, inputs, shard and points this is
//	results.csv                one row per point of the last run (or merge)
//	points/<id>/scenario.yaml  its effective scenario
//	points/<id>/summary.json   its summary
//	points/<id>/point.json     the point's index, id, overrides, the hashes of
//	                           the files it read and of the two above; written
//	                           last: present = finished (sweeppoint.go)
//
// Every file is written through writeIn (outfiles.go): to a temporary
// name, then renamed, so a killed run never leaves a half-written file
// under a real name; and inside DIR only.

const (
	sweepManifestFile = results.SweepManifestFile
	sweepResultsFile  = results.SweepResultsFile
	sweepPointsDir    = results.PointsDir
	pointSummaryFile  = results.SummaryFile
	pointRecordFile   = results.PointRecordFile
	pointScenarioFile = results.ScenarioFile
)

// sweepLayoutVersion changes when the layout or the point expansion does.
// 2: the manifest holds the inputs' hashes and the shard; point.json is
// written last, with hashes.
const sweepLayoutVersion = 2

// sweepManifest is sweep.json: the identity of a sweep and its full point list
// (all shards), so that merge needs nothing else.
type sweepManifest struct {
	Version        int           `json:"version"`
	Scenario       string        `json:"scenario"`        // the scenario's name
	ScenarioSHA256 string        `json:"scenario_sha256"` // of the base's effective YAML, sweep block removed
	Inputs         []inputFile   `json:"inputs"`          // the files the base scenario reads (points record their own)
	Shard          string        `json:"shard"`           // the points the directory holds: "all", or "i/n" (see sweep.Shard)
	PointsSHA256   string        `json:"points_sha256"`   // of the point list's JSON
	Columns        []string      `json:"columns"`         // the varied paths
	Points         []sweep.Point `json:"points"`
}

// sweepDifference says how sweep a, held by aName, differs from sweep b, held
// by bName; "" when they are the same sweep. With anyShard, directories of
// different shards of one sweep are the same sweep.
func sweepDifference(a, b *sweepManifest, aName, bName string, anyShard bool) string {
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
	case !anyShard && a.Shard != b.Shard:
		return fmt.Sprintf("%s holds shard %s, %s shard %s", aName, a.Shard, bName, b.Shard)
	}
	if why := inputsDifference(a.Inputs, b.Inputs); why != "" {
		return fmt.Sprintf("%s and %s were made from different inputs: %s", aName, bName, why)
	}
	return ""
}

// inputsDifference names the first file whose content differs between a
// and b, or that only one reads; "" when they match.
func inputsDifference(a, b []inputFile) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d files against %d", len(a), len(b))
	}
	for i := range a {
		switch {
		case a[i].Path != b[i].Path:
			return fmt.Sprintf("%s against %s", a[i].Path, b[i].Path)
		case a[i].SHA256 != b[i].SHA256:
			return fmt.Sprintf("the content of %s changed", a[i].Path)
		}
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

// checkSweepDir reports whether dir can take sweep m, reading only: a missing
// or empty directory can (fresh), as can one that holds the same sweep;
// any other directory is refused, saying why.
func checkSweepDir(dir string, m *sweepManifest) (fresh bool, err error) {
	old, err := readSweepManifest(dir)
	switch {
	case err == nil:
		if why := sweepDifference(old, m, "the directory", "this sweep", false); why != "" {
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
	if err := outdir.MakeDir(dir); err != nil {
		return err
	}
	return outdir.WriteIn(dir, sweepManifestFile, func(w io.Writer) error { return outdir.WriteIndentedJSON(w, m) })
}

// pointPath returns the folder of a point's outputs.
func pointPath(dir, id string) string { return filepath.Join(dir, sweepPointsDir, id) }

// pointRel returns the folder of a point's outputs inside the sweep's.
func pointRel(id string) string { return sweepPointsDir + "/" + id }
