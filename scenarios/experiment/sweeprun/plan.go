package sweeprun

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"handoff/models/strictyaml"
	"handoff/results/sweepdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/sweep"
)

// plan is a checked sweep, ready to run: the scenario file's bytes
// (read once, so every point sees the same file), the base overrides, the
// manifest and the points of this run's shard.
type plan struct {
	file     string
	data     []byte
	sets     []scenarios.Set
	seed     uint64 // the base scenario's
	manifest *sweepdir.Manifest
	shard    sweep.Shard
	points   []sweep.Point         // this shard's, in order
	sums     *experiment.InputSums // the hashes of the files the points read
	simulate experiment.Simulate   // never nil
}

// newPlan loads the base scenario with --set, merges --vary into its
// sweep block, checks the paths against the schema and expands the
// points. Nothing is written; the points' values are checked later
// (plan.checkPoints), in parallel.
func newPlan(file string, rawSets, rawVary []string, shard sweep.Shard) (*plan, error) {
	sets, err := experiment.ParseSets(rawSets)
	if err != nil {
		return nil, err
	}
	data, err := scenarios.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	base, err := scenarios.Parse(data, file, sets...)
	if err != nil {
		return nil, err
	}
	pl := &plan{file: file, data: data, sets: sets}
	sw, err := sweepSpec(base, rawVary)
	if err != nil {
		return nil, pl.place(err)
	}
	pl.seed = base.Seed
	if pl.sums, err = experiment.NewInputSums(file); err != nil {
		return nil, err
	}
	if err := sw.CheckPaths(pl.checkPath); err != nil {
		return nil, pl.place(err)
	}
	all, err := sweep.Expand(&sw, base.Seed)
	if err != nil {
		return nil, pl.place(err)
	}
	if pl.manifest, err = newSweepManifest(base, sw.Columns(), all); err != nil {
		return nil, err
	}
	if pl.manifest.Inputs, err = pl.sums.Files(base); err != nil {
		return nil, err
	}
	pl.shard, pl.points = shard, shard.Select(all)
	pl.manifest.Shard = shard.String()
	return pl, nil
}

// survey sorts the plan's points as found in dir: a point saved whole
// (readSavedPoint) is done; the others are pending, in order, and those
// found damaged are also listed with what is wrong, to run again. A point
// saved from an input that has changed since refuses the directory.
func (pl *plan) survey(dir string) (pending []sweep.Point, damaged []string, err error) {
	for _, p := range pl.points {
		sp, err := sweepdir.ReadSavedPoint(dir, p, pl.manifest.Scenario)
		switch {
		case errors.Is(err, sweepdir.ErrNoPoint):
			pending = append(pending, p)
		case err != nil:
			pending = append(pending, p)
			damaged = append(damaged, fmt.Sprintf("sweep point %s: %v", p.ID, err))
		default:
			if path, why := pl.sums.Changed(sp.Record.Inputs); why != "" {
				return nil, nil, fmt.Errorf("%s: will not mix results: point %s read %s, which %s; use another directory",
					dir, p, path, why)
			}
		}
	}
	return pending, damaged, nil
}

// without returns the plan's points but the failed ones, in order.
func (pl *plan) without(failed []sweep.Point) []sweep.Point {
	skip := map[string]bool{}
	for _, p := range failed {
		skip[p.ID] = true
	}
	var out []sweep.Point
	for _, p := range pl.points {
		if !skip[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

// sweepSpec returns the scenario's sweep block with the --vary axes added,
// every path resolved to the field it names.
func sweepSpec(base *scenarios.Loaded, rawVary []string) (sweep.Spec, error) {
	var s sweep.Spec
	if base.Sweep != nil {
		s = *base.Sweep
	} else if len(rawVary) == 0 {
		return s, fmt.Errorf("%s: no sweep: block and no --vary flag: nothing to vary", base.File)
	}
	axes := make([]sweep.Axis, 0, len(rawVary))
	for _, r := range rawVary {
		ax, err := sweep.ParseVary(r)
		if err != nil {
			return s, err
		}
		axes = append(axes, ax)
	}
	return s.WithVary(base.FieldPath, axes...)
}

// checkPath reports whether path names a scenario field, by applying it
// with value to the base; errors about the value are left for the points.
func (pl *plan) checkPath(path, value string) error {
	sets := append(slices.Clip(pl.sets), scenarios.Set{Path: path, Value: value})
	_, err := scenarios.Parse(pl.data, pl.file, sets...)
	if prefix := "--set " + path + ": "; err != nil && strings.HasPrefix(err.Error(), prefix) {
		return errors.New(strings.TrimPrefix(err.Error(), prefix))
	}
	return nil
}

// place puts the scenario file into a sweep FieldError; after --set the
// lines are those of a re-encoded document, so they are dropped.
func (pl *plan) place(err error) error {
	var fe *strictyaml.FieldError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = pl.file
		if len(pl.sets) > 0 {
			fe.Line = 0
		}
	}
	return err
}

// load returns a point's scenario: the file with --set, then the point's
// overrides, applied; its sweep block removed.
func (pl *plan) load(p sweep.Point) (*scenarios.Loaded, error) {
	sets := slices.Clip(pl.sets)
	for _, o := range p.Overrides {
		sets = append(sets, scenarios.Set{Path: o.Path, Value: o.Value})
	}
	l, err := scenarios.Parse(pl.data, pl.file, sets...)
	if err != nil {
		return nil, fmt.Errorf("sweep point %s: %w", p, err)
	}
	l.Sweep = nil
	return l, nil
}

// replay returns how to run point p alone: the base scenario with the
// sweep's --set flags, then the point's overrides (a replica's seed among
// them, which --seed must repeat, since --seed wins over --set).
func (pl *plan) replay(p sweep.Point) experiment.Replay {
	r := experiment.Replay{File: pl.file, Seed: pl.seed}
	for _, s := range pl.sets {
		r.Sets = append(r.Sets, s.String())
	}
	for _, o := range p.Overrides {
		r.Sets = append(r.Sets, scenarios.Set{Path: o.Path, Value: o.Value}.String())
		if seed, err := strconv.ParseUint(o.Value, 10, 64); o.Path == sweep.SeedPath && err == nil {
			r.Seed = seed
		}
	}
	return r
}

// newSweepManifest builds sweep.json's contents: the base scenario's identity
// (name and a hash of its effective YAML without the sweep block) and the
// point list with its hash.
func newSweepManifest(base *scenarios.Loaded, columns []string, points []sweep.Point) (*sweepdir.Manifest, error) {
	b := *base
	b.Sweep = nil
	eff, err := b.Effective("")
	if err != nil {
		return nil, err
	}
	list, err := json.Marshal(points)
	if err != nil {
		return nil, err
	}
	return &sweepdir.Manifest{Version: sweepdir.Version, Scenario: base.Name, ScenarioSHA256: sweepdir.SHA256(eff),
		PointsSHA256: sweepdir.SHA256(list), Columns: columns, Points: points}, nil
}

// Points returns the points of the sweep of scenario file with --set and
// --vary applied, checked as Run checks them before it runs any (their
// paths; not their values). Nothing is written.
func Points(file string, rawSets, rawVary []string) ([]sweep.Point, error) {
	pl, err := newPlan(file, rawSets, rawVary, sweep.Shard{})
	if err != nil {
		return nil, err
	}
	return pl.points, nil
}
