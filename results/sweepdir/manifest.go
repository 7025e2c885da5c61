package sweepdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"handoff/results"
	"handoff/results/outdir"
)

// Version changes when the layout or the point expansion does.
// 2: the manifest holds the inputs' hashes and the shard; point.json is
// written last, with hashes.
const Version = 2

// Manifest is sweep.json: the identity of a sweep and its full point list
// (all shards), so that merge needs nothing else.
type Manifest struct {
	Version        int         `json:"version"`
	Scenario       string      `json:"scenario"`        // the scenario's name
	ScenarioSHA256 string      `json:"scenario_sha256"` // of the base's effective YAML, sweep block removed
	Inputs         []InputFile `json:"inputs"`          // the files the base scenario reads (points record their own)
	Shard          string      `json:"shard"`           // the points the directory holds: "all", or "i/n" (see scenarios/sweep.Shard)
	PointsSHA256   string      `json:"points_sha256"`   // of the point list's JSON
	Columns        []string    `json:"columns"`         // the varied paths
	Points         []Point     `json:"points"`
}

// InputFile is one file a scenario reads (scenarios.Loaded.Inputs) and the
// SHA-256 of its content when it was read.
type InputFile struct {
	Path   string `json:"path"` // relative to the scenario file's folder, slash-separated; absolute when outside it
	SHA256 string `json:"sha256"`
}

// Difference says how sweep a, held by aName, differs from sweep b, held
// by bName; "" when they are the same sweep. With anyShard, directories of
// different shards of one sweep are the same sweep.
func Difference(a, b *Manifest, aName, bName string, anyShard bool) string {
	switch {
	case a.Version != b.Version:
		return fmt.Sprintf("%s has sweep layout version %d, %s %d", aName, a.Version, bName, b.Version)
	case a.Scenario != b.Scenario:
		return fmt.Sprintf("%s holds scenario %q, %s %q", aName, a.Scenario, bName, b.Scenario)
	case a.ScenarioSHA256 != b.ScenarioSHA256:
		return fmt.Sprintf("%s and %s hold different versions of scenario %q (its file or --set differ)", aName, bName, a.Scenario)
	case a.PointsSHA256 != b.PointsSHA256:
		return fmt.Sprintf("%s holds other points (%d varying %s) than %s (%d varying %s)",
			aName, len(a.Points), strings.Join(a.Columns, ", "), bName, len(b.Points), strings.Join(b.Columns, ", "))
	case !anyShard && a.Shard != b.Shard:
		return fmt.Sprintf("%s holds shard %s, %s shard %s", aName, a.Shard, bName, b.Shard)
	}
	if why := InputsDifference(a.Inputs, b.Inputs); why != "" {
		return fmt.Sprintf("%s and %s were made from different inputs: %s", aName, bName, why)
	}
	return ""
}

// InputsDifference names the first file whose content differs between a
// and b, or that only one reads; "" when they match.
func InputsDifference(a, b []InputFile) string {
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

// ReadManifest reads dir's sweep.json; it returns fs.ErrNotExist (wrapped)
// when there is none.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, results.SweepManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// IsSweep reports whether dir holds a sweep's table (results.csv), the
// file that plotting and reporting read a sweep from.
func IsSweep(dir string) bool { return exists(filepath.Join(dir, results.SweepResultsFile)) }

// Check reports whether dir can take sweep m, reading only: a missing or
// empty directory can (fresh), as can one that holds the same sweep; any
// other directory is refused, saying why.
func Check(dir string, m *Manifest) (fresh bool, err error) {
	old, err := ReadManifest(dir)
	switch {
	case err == nil:
		if why := Difference(old, m, "the directory", "this sweep", false); why != "" {
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
		return false, fmt.Errorf("%s: not empty and holds no %s, so it is no sweep's output; use another directory",
			dir, results.SweepManifestFile)
	}
	return true, nil
}

// WriteManifest creates dir and writes its sweep.json.
func WriteManifest(dir string, m *Manifest) error {
	if err := outdir.MakeDir(dir); err != nil {
		return err
	}
	return outdir.WriteIn(dir, results.SweepManifestFile, func(w io.Writer) error { return outdir.WriteIndentedJSON(w, m) })
}

// exists reports whether path names an existing file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
