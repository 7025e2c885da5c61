package sweepdir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"handoff/results"
	"handoff/results/outdir"
)

// SeedPath is the scenario path that a sweep's replicas vary.
const SeedPath = "seed"

// Override is one varied field of a point: a dotted scenario path and a
// YAML value, applied as --set path=value.
type Override struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

// Point is one scenario of a sweep: the base scenario with Overrides
// applied. scenarios/sweep expands a sweep into them (its Point is
// this type); this package records them in sweep.json, point.json and
// results.csv.
type Point struct {
	Index     int        `json:"index"`     // 0-based position in the whole sweep
	ID        string     `json:"id"`        // stable, readable, unique: "0007-3f2a1c9b"
	Overrides []Override `json:"overrides"` // in the sweep's column order
}

// String names the point in messages: "0003-1a2b3c4d (pools.decode.count=4)",
// each override as --set takes it (line breaks escaped).
func (p Point) String() string {
	parts := make([]string, len(p.Overrides))
	for i, o := range p.Overrides {
		parts[i] = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(o.Path + "=" + o.Value)
	}
	return p.ID + " (" + strings.Join(parts, ", ") + ")"
}

// PointRecord is a point's point.json: the point, the files it read with
// their hashes, and the hashes of the scenario.yaml and summary.json saved
// beside it. It is written last, so its presence means the point finished,
// and a later run checks it before it reuses the point (ReadSavedPoint).
type PointRecord struct {
	Point
	Inputs         []InputFile `json:"inputs"`
	ScenarioSHA256 string      `json:"scenario_sha256"`
	SummarySHA256  string      `json:"summary_sha256"`
}

// PointPath returns the folder of a point's outputs.
func PointPath(dir, id string) string { return filepath.Join(dir, results.PointsDir, id) }

// PointSummaryPath returns a point's summary.json.
func PointSummaryPath(dir, id string) string {
	return filepath.Join(PointPath(dir, id), results.SummaryFile)
}

// pointRel returns the folder of a point's outputs inside the sweep's.
func pointRel(id string) string { return results.PointsDir + "/" + id }

// SHA256 returns the hex SHA-256 of b, as the manifest and point.json
// record hashes.
func SHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// RemoveTemps removes, best effort, the temporary files a killed run left
// in a point's folder.
func RemoveTemps(dir, id string) { outdir.RemoveTemps(dir, pointRel(id)) }

// WritePoint writes rec's point: first it removes point.json, so that the
// point counts as unfinished until it is whole again, then writes
// scenario.yaml (eff), summary.json and point.json with their hashes.
func WritePoint(dir string, rec PointRecord, eff, summary []byte) error {
	at := pointRel(rec.ID) + "/"
	if err := outdir.RemoveIn(dir, at+results.PointRecordFile); err != nil {
		return err
	}
	rec.ScenarioSHA256, rec.SummarySHA256 = SHA256(eff), SHA256(summary)
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{results.ScenarioFile, func(w io.Writer) error { _, err := w.Write(eff); return err }},
		{results.SummaryFile, func(w io.Writer) error { _, err := w.Write(summary); return err }},
		{results.PointRecordFile, func(w io.Writer) error { return outdir.WriteIndentedJSON(w, rec) }},
	}
	for _, f := range files {
		if err := outdir.WriteIn(dir, at+f.name, f.write); err != nil {
			return err
		}
	}
	return nil
}

// SavedPoint is a point found finished in a sweep directory, checked.
type SavedPoint struct {
	Record            PointRecord
	Scenario, Summary []byte // the files as saved
}

// ErrNoPoint is ReadSavedPoint's answer for a point not finished: no
// point.json.
var ErrNoPoint = errors.New("not finished")

// ReadSavedPoint reads p's files in dir and checks them: point.json must
// be p's, the hashes those of the files beside it, and summary.json one
// this build writes, of scenario name. It returns ErrNoPoint when p has no
// point.json, and another error saying how the point is damaged.
func ReadSavedPoint(dir string, p Point, name string) (*SavedPoint, error) {
	at := pointRel(p.ID) + "/"
	data, err := outdir.ReadIn(dir, at+results.PointRecordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoPoint
	}
	if err != nil {
		return nil, err
	}
	sp := &SavedPoint{}
	if err := json.Unmarshal(data, &sp.Record); err != nil {
		return nil, fmt.Errorf("%s: %w", results.PointRecordFile, err)
	}
	if !reflect.DeepEqual(sp.Record.Point, p) {
		return nil, fmt.Errorf("%s is another point's (%s)", results.PointRecordFile, sp.Record.Point)
	}
	for _, f := range []struct {
		name string
		data *[]byte
		sum  string
	}{{results.ScenarioFile, &sp.Scenario, sp.Record.ScenarioSHA256}, {results.SummaryFile, &sp.Summary, sp.Record.SummarySHA256}} {
		if *f.data, err = outdir.ReadIn(dir, at+f.name); err != nil {
			return nil, err
		}
		if SHA256(*f.data) != f.sum {
			return nil, fmt.Errorf("%s is not the file saved with the point (its hash differs)", f.name)
		}
	}
	if err := CheckSummary(sp.Summary, name); err != nil {
		return nil, fmt.Errorf("%s: %w", results.SummaryFile, err)
	}
	return sp, nil
}

// CheckSummary checks that data is a summary.json as this build writes
// it, of scenario name: every field there and none other, and request
// counts that add up to a run that had requests.
func CheckSummary(data []byte, name string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	if missing := missingKeys(keys); len(missing) > 0 {
		return fmt.Errorf("no %q (of %d fields missing)", missing[0], len(missing))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s results.Summary
	if err := dec.Decode(&s); err != nil {
		return err
	}
	c := s.Requests
	switch {
	case s.Scenario != name:
		return fmt.Errorf("of scenario %q, not %q", s.Scenario, name)
	case c.Total <= 0 || c.Completed < 0 || c.Rejected < 0 || c.Dropped < 0 || c.Failed < 0 ||
		c.Abandoned < 0 || c.Completed+c.Rejected+c.Dropped+c.Failed+c.Abandoned != c.Total:
		return fmt.Errorf("request counts %+v do not add up to a run", c)
	}
	return nil
}

// missingKeys returns, sorted, the top-level fields of summary.json that
// keys lacks.
func missingKeys(keys map[string]json.RawMessage) []string {
	var missing []string
	t := reflect.TypeFor[results.Summary]()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if opts == "omitempty" {
			continue // present only when the run has it (kv_tiers)
		}
		if _, ok := keys[name]; !ok && name != "" && name != "-" {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing
}

// ReadPointSummary reads a point's summary.json from dir, never through a
// symbolic link out of it.
func ReadPointSummary(dir, id string) (results.Summary, error) {
	data, err := outdir.ReadIn(dir, pointRel(id)+"/"+results.SummaryFile)
	if err != nil {
		return results.Summary{}, err
	}
	return results.ParseSummary(data, PointSummaryPath(dir, id))
}

// HasPointSummary reports whether point id of dir has a summary.json (a
// point of another shard, or not run yet, has none).
func HasPointSummary(dir, id string) bool { return exists(PointSummaryPath(dir, id)) }
