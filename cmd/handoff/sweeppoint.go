package main

import (
	"bytes"
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
	"handoff/scenarios"
	"handoff/scenarios/sweep"
)

// pointRecord is a point's point.json: the point, the files it read with
// their hashes, and the hashes of the scenario.yaml and summary.json saved
// beside it. It is written last, so its presence means the point finished,
// and a later run checks it before it reuses the point (savedPoint).
type pointRecord struct {
	sweep.Point
	Inputs         []inputFile `json:"inputs"`
	ScenarioSHA256 string      `json:"scenario_sha256"`
	SummarySHA256  string      `json:"summary_sha256"`
}

// writePoint writes a point's files, point.json last.
func writePoint(dir string, p sweep.Point, l *scenarios.Loaded, sum results.Summary, inputs []inputFile) error {
	outdir.RemoveTemps(dir, pointRel(p.ID))
	eff, err := l.Effective(pointPath(dir, p.ID))
	if err != nil {
		return err
	}
	var summary bytes.Buffer
	if err := results.WriteJSON(&summary, sum); err != nil {
		return err
	}
	return writePointFiles(dir, pointRecord{Point: p, Inputs: inputs}, eff, summary.Bytes())
}

// writePointFiles writes rec's point: first it removes point.json, so that
// the point counts as unfinished until it is whole again, then writes
// scenario.yaml (eff), summary.json and point.json with their hashes.
func writePointFiles(dir string, rec pointRecord, eff, summary []byte) error {
	at := pointRel(rec.ID) + "/"
	if err := outdir.RemoveIn(dir, at+pointRecordFile); err != nil {
		return err
	}
	rec.ScenarioSHA256, rec.SummarySHA256 = hexSHA256(eff), hexSHA256(summary)
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{pointScenarioFile, func(w io.Writer) error { _, err := w.Write(eff); return err }},
		{pointSummaryFile, func(w io.Writer) error { _, err := w.Write(summary); return err }},
		{pointRecordFile, func(w io.Writer) error { return outdir.WriteIndentedJSON(w, rec) }},
	}
	for _, f := range files {
		if err := outdir.WriteIn(dir, at+f.name, f.write); err != nil {
			return err
		}
	}
	return nil
}

// savedPoint is a point found finished in a sweep directory, checked.
type savedPoint struct {
	rec               pointRecord
	scenario, summary []byte // the files as saved
}

// errNoPoint is savedPoint's answer for a point not finished: no point.json.
var errNoPoint = errors.New("not finished")

// readSavedPoint reads p's files in dir and checks them: point.json must
// be p's, the hashes those of the files beside it, and summary.json one
// this build writes, of scenario name. It returns errNoPoint when p has no
// point.json, and another error saying how the point is damaged.
func readSavedPoint(dir string, p sweep.Point, name string) (*savedPoint, error) {
	at := pointRel(p.ID) + "/"
	data, err := outdir.ReadIn(dir, at+pointRecordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoPoint
	}
	if err != nil {
		return nil, err
	}
	sp := &savedPoint{}
	if err := json.Unmarshal(data, &sp.rec); err != nil {
		return nil, fmt.Errorf("%s: %w", pointRecordFile, err)
	}
	if !reflect.DeepEqual(sp.rec.Point, p) {
		return nil, fmt.Errorf("%s is another point's (%s)", pointRecordFile, describePoint(sp.rec.Point))
	}
	for _, f := range []struct {
		name string
		data *[]byte
		sum  string
	}{{pointScenarioFile, &sp.scenario, sp.rec.ScenarioSHA256}, {pointSummaryFile, &sp.summary, sp.rec.SummarySHA256}} {
		if *f.data, err = outdir.ReadIn(dir, at+f.name); err != nil {
			return nil, err
		}
		if hexSHA256(*f.data) != f.sum {
			return nil, fmt.Errorf("%s is not the file saved with the point (its hash differs)", f.name)
		}
	}
	if err := checkSummary(sp.summary, name); err != nil {
		return nil, fmt.Errorf("%s: %w", pointSummaryFile, err)
	}
	return sp, nil
}

// checkSummary checks that data is a summary.json as this build writes
// it, of scenario name: every field there and none other, and request
// counts that add up to a run that had requests.
func checkSummary(data []byte, name string) error {
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

// readPointSummary reads a point's summary.json from dir.
func readPointSummary(dir, id string) (results.Summary, error) {
	data, err := outdir.ReadIn(dir, pointRel(id)+"/"+pointSummaryFile)
	if err != nil {
		return results.Summary{}, err
	}
	return results.ParseSummary(data, filepath.Join(pointPath(dir, id), pointSummaryFile))
}
