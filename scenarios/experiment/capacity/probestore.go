package capacity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/results/sweepdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
)

// The -o directory of goodput and plan holds, besides their tables and
// plots, every probe (one simulation: one rate, one fleet) as soon as it
// finishes:
//
//	probes/<id>/summary.json  its summary
//	probes/<id>/probe.json    its record (probeRecord), written last:
//	                          present = finished
//
// <id> is a hash of the probe's own overrides (the rate scale, the fleet).
// A rerun of the command on the same directory takes a finished probe from
// its files instead of simulating it again, so an interrupted search
// resumes, and refuses one made from another version of the scenario or
// its input files. Before it trusts them it checks them, as a sweep checks
// its points: probe.json against the checksum it carries of itself,
// summary.json against the hash probe.json holds of it and as a summary
// this build writes. A probe that fails a check is damaged: it is named on
// stderr and run again. The figures the summary holds are read from it;
// probe.json adds those it does not (the shares within each limit, the
// unserved requests).

const (
	probesDir          = results.ProbesDir
	probeRecordFile    = results.ProbeRecordFile
	probeLayoutVersion = 2 // 2: probe.json carries record_sha256
)

// probeRecord is a probe's probe.json: what it was run from and what it
// measured.
type probeRecord struct {
	Version        int                  `json:"version"`
	Sets           []string             `json:"sets"`            // the probe's own overrides, after the command's --set
	Seed           uint64               `json:"seed"`            // the run's
	BaseSHA256     string               `json:"base_sha256"`     // of the command's scenario before the probe's overrides (see scenarioHash)
	ScenarioSHA256 string               `json:"scenario_sha256"` // of its effective scenario, plan and sweep blocks removed
	Inputs         []sweepdir.InputFile `json:"inputs"`          // the files it read
	SummarySHA256  string               `json:"summary_sha256"`  // of the summary.json beside it
	Probe          savedProbe           `json:"probe"`
	RecordSHA256   string               `json:"record_sha256"` // of this record with this field empty (checksum)
}

// checksum returns the hash of rec with its RecordSHA256 empty, as JSON.
func (rec probeRecord) checksum() (string, error) {
	rec.RecordSHA256 = ""
	data, err := json.Marshal(rec)
	return sweepdir.SHA256(data), err
}

// savedProbe is a probe as probe.json holds it.
type savedProbe struct {
	Probe
	Unserved string `json:"unserved,omitempty"` // the unserved error's text
}

// probeStore saves and finds the probes of one goodput or plan command.
// The zero value (no directory) saves nothing.
type probeStore struct {
	dir     string // the -o directory; "" = none
	sums    *experiment.InputSums
	stderr  io.Writer // warnings; nil = none
	baseSHA string    // scenarioHash of the command's scenario
}

// newProbeStore returns the store in dir ("" = none) of the probes of the
// command's scenario base (with its --set and --seed). Before anything
// runs, it refuses a directory that holds probes of another version of
// base, or of another seed.
func newProbeStore(dir string, base *scenarios.Loaded, stderr io.Writer) (*probeStore, error) {
	if dir == "" {
		return &probeStore{}, nil
	}
	sums, err := experiment.NewInputSums(base.File)
	if err != nil {
		return nil, err
	}
	s := &probeStore{dir: dir, sums: sums, stderr: stderr}
	if s.baseSHA, err = scenarioHash(base); err != nil {
		return nil, err
	}
	return s, s.checkSaved(base.Seed)
}

// scenarioHash is the hash of l's effective scenario, its plan and sweep
// blocks removed (they choose probes, not what one measures).
func scenarioHash(l *scenarios.Loaded) (string, error) {
	c := *l
	c.Plan, c.Sweep = nil, nil
	eff, err := c.Effective("")
	return sweepdir.SHA256(eff), err
}

// checkSaved refuses a directory whose saved probes were made from
// another version of the scenario, another seed or files that changed
// since. Records it cannot read are left for saved to name.
func (s *probeStore) checkSaved(seed uint64) error {
	recs, _ := filepath.Glob(filepath.Join(s.dir, probesDir, "*", probeRecordFile))
	for _, path := range recs {
		var rec probeRecord
		data, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(data, &rec) != nil {
			continue
		}
		why := ""
		switch {
		case rec.BaseSHA256 != s.baseSHA:
			why = "it holds runs of another version of the scenario (its file or --set differ)"
		case rec.Seed != seed:
			why = fmt.Sprintf("it holds runs with seed %d, this one's is %d", rec.Seed, seed)
		}
		if file, changed := s.sums.Changed(rec.Inputs); changed != "" {
			why = fmt.Sprintf("a run it holds read %s, which %s", file, changed)
		}
		if why != "" {
			return fmt.Errorf("%s: will not mix results: %s; use another directory", s.dir, why)
		}
	}
	return nil
}

// run returns the probe of l, whose own overrides are sets: the one saved
// finished in the directory, else a new run of simF, which it saves.
func (s *probeStore) run(l *scenarios.Loaded, sets []string, simF experiment.Simulate) (Probe, error) {
	if s.dir == "" {
		m, _, err := runProbe(l, simF)
		return m, err
	}
	rec, err := s.expected(l, sets)
	if err != nil {
		return Probe{}, err
	}
	id := probeID(sets)
	if m, ok, err := s.saved(id, rec, l.Name); ok || err != nil {
		return m, err
	}
	m, sum, err := runProbe(l, simF)
	if err != nil {
		return m, err
	}
	return m, s.write(id, rec, m, sum)
}

// expected returns the record a probe of l with overrides sets has, but
// for its results.
func (s *probeStore) expected(l *scenarios.Loaded, sets []string) (*probeRecord, error) {
	sum, err := scenarioHash(l)
	if err != nil {
		return nil, err
	}
	inputs, err := s.sums.Files(l)
	if err != nil {
		return nil, err
	}
	return &probeRecord{Version: probeLayoutVersion, Sets: slices.Clip(sets), Seed: l.Seed, BaseSHA256: s.baseSHA,
		ScenarioSHA256: sum, Inputs: inputs}, nil
}

// probeID names a probe's folder: the first 16 hex digits of the hash of
// its overrides.
func probeID(sets []string) string { return sweepdir.SHA256([]byte(strings.Join(sets, "\n")))[:16] }

// probeRel returns a probe's file name inside the directory.
func probeRel(id, name string) string { return probesDir + "/" + id + "/" + name }

// saved returns the probe saved as id, of scenario name, when it was made
// from what want says. A probe made otherwise, or by another layout, is an
// error; one damaged (its files fail their checks) is named on stderr and
// reported as not saved, to run again.
func (s *probeStore) saved(id string, want *probeRecord, name string) (Probe, bool, error) {
	data, err := outdir.ReadIn(s.dir, probeRel(id, probeRecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Probe{}, false, nil
	}
	at := filepath.Join(s.dir, probesDir, id)
	var rec probeRecord
	var sum results.Summary
	if err == nil {
		err = strictJSON(data, &rec)
	}
	if err == nil && rec.Version != want.Version {
		return Probe{}, false, fmt.Errorf("%s: will not mix results: its probes have layout version %d, this build's %d; "+
			"use another directory", at, rec.Version, want.Version)
	}
	if err == nil {
		sum, err = s.checkFiles(id, &rec, name)
	}
	if err != nil {
		if s.stderr != nil {
			fmt.Fprintf(s.stderr, "warning: probe %s: %s; it runs again\n", at, experiment.OneLine(err.Error()))
		}
		return Probe{}, false, nil
	}
	if why := recordDifference(&rec, want); why != "" {
		return Probe{}, false, fmt.Errorf("%s: will not mix results: %s; use another directory", at, why)
	}
	if path, why := s.sums.Changed(rec.Inputs); why != "" {
		return Probe{}, false, fmt.Errorf("%s: will not mix results: the probe read %s, which %s; use another directory", at, path, why)
	}
	return rec.Probe.probe(&sum), true, nil
}

// strictJSON decodes data into v, refusing fields v does not have.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", probeRecordFile, err)
	}
	return nil
}

// checkFiles checks a probe's files: rec (its probe.json) against its
// checksum, and the summary.json beside it against rec's hash of it and as
// a summary of scenario name, which it returns.
func (s *probeStore) checkFiles(id string, rec *probeRecord, name string) (results.Summary, error) {
	if sum, err := rec.checksum(); err != nil || sum != rec.RecordSHA256 {
		return results.Summary{}, fmt.Errorf("%s does not match its checksum (it changed after it was written)", probeRecordFile)
	}
	data, err := outdir.ReadIn(s.dir, probeRel(id, results.SummaryFile))
	if err != nil {
		return results.Summary{}, err
	}
	if sweepdir.SHA256(data) != rec.SummarySHA256 {
		return results.Summary{}, fmt.Errorf("%s is not the file saved with the probe (its hash differs)", results.SummaryFile)
	}
	if err := sweepdir.CheckSummary(data, name); err != nil {
		return results.Summary{}, fmt.Errorf("%s: %w", results.SummaryFile, err)
	}
	return results.ParseSummary(data, results.SummaryFile)
}

// recordDifference says how the saved probe rec was made otherwise than
// want; "" when it was not.
func recordDifference(rec, want *probeRecord) string {
	switch {
	case !slices.Equal(rec.Sets, want.Sets):
		return fmt.Sprintf("probe %s is of %s, not %s", probeID(want.Sets), setList(rec.Sets), setList(want.Sets))
	case rec.Seed != want.Seed:
		return fmt.Sprintf("a probe ran with seed %d, this run's is %d", rec.Seed, want.Seed)
	case rec.ScenarioSHA256 != want.ScenarioSHA256:
		return "a probe ran on another version of the scenario (its file or --set differ)"
	}
	if why := sweepdir.InputsDifference(rec.Inputs, want.Inputs); why != "" {
		return "a probe read other files: " + why
	}
	return ""
}

// setList writes a probe's overrides as a comma list ("none" when it has
// none), as messages write lists.
func setList(sets []string) string {
	if len(sets) == 0 {
		return "none"
	}
	return strings.Join(sets, ", ")
}

// write saves a probe's summary.json, then its probe.json.
func (s *probeStore) write(id string, rec *probeRecord, m Probe, sum results.Summary) error {
	if err := outdir.MakeDir(s.dir); err != nil {
		return err
	}
	var summary bytes.Buffer
	if err := results.WriteJSON(&summary, sum); err != nil {
		return err
	}
	rec.SummarySHA256, rec.Probe = sweepdir.SHA256(summary.Bytes()), savedProbe{Probe: m}
	if m.unserved != nil {
		rec.Probe.Unserved = m.unserved.Error()
	}
	var err error
	if rec.RecordSHA256, err = rec.checksum(); err != nil {
		return err
	}
	if err := outdir.WriteIn(s.dir, probeRel(id, results.SummaryFile), func(w io.Writer) error { _, err := w.Write(summary.Bytes()); return err }); err != nil {
		return err
	}
	return outdir.WriteIn(s.dir, probeRel(id, probeRecordFile), func(w io.Writer) error { return outdir.WriteIndentedJSON(w, rec) })
}
