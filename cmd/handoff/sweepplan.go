package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"handoff/models/strictyaml"
	"handoff/scenarios"
	"handoff/scenarios/sweep"
)

// sweepPlan is a checked sweep, ready to run: the scenario file's bytes
// (read once, so every point sees the same file), the base overrides, the
// manifest and the points of this run's shard.
type sweepPlan struct {
	file     string
	data     []byte
	sets     []scenarios.Set
	seed     uint64 // the base scenario's
	manifest *sweepManifest
	shard    sweep.Shard
	points   []sweep.Point // this shard's, in order
	sums     *inputSums    // the hashes of the files the points read
	simulate simulateFunc  // nil: simulate
}

// planSweep loads the base scenario with --set, merges --vary into its
// sweep block, checks the paths against the schema and expands the
// points. Nothing is written; the points' values are checked later
// (sweepPlan.checkPoints), in parallel.
func planSweep(file string, rawSets, rawVary []string, shard sweep.Shard) (*sweepPlan, error) {
	sets, err := parseSetFlags(rawSets)
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
	pl := &sweepPlan{file: file, data: data, sets: sets}
	sw, err := sweepSpec(base, rawVary)
	if err != nil {
		return nil, pl.place(err)
	}
	pl.seed = base.Seed
	if pl.sums, err = newInputSums(file); err != nil {
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
	if pl.manifest.Inputs, err = pl.sums.files(base); err != nil {
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
func (pl *sweepPlan) survey(dir string) (pending []sweep.Point, damaged []string, err error) {
	for _, p := range pl.points {
		sp, err := readSavedPoint(dir, p, pl.manifest.Scenario)
		switch {
		case errors.Is(err, errNoPoint):
			pending = append(pending, p)
		case err != nil:
			pending = append(pending, p)
			damaged = append(damaged, fmt.Sprintf("sweep point %s: %v", p.ID, err))
		default:
			if path, why := pl.sums.changed(sp.rec.Inputs); why != "" {
				return nil, nil, fmt.Errorf("%s: will not mix results: point %s read %s, which %s; use another directory",
					dir, describePoint(p), path, why)
			}
		}
	}
	return pending, damaged, nil
}

// without returns the plan's points but those of the failed indexes of
// pending, in order.
func (pl *sweepPlan) without(pending []sweep.Point, failed []int) []sweep.Point {
	skip := map[string]bool{}
	for _, i := range failed {
		skip[pending[i].ID] = true
	}
	var out []sweep.Point
	for _, p := range pl.points {
		if !skip[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

// parseSetFlags parses --set flags.
func parseSetFlags(raw []string) ([]scenarios.Set, error) {
	sets := make([]scenarios.Set, 0, len(raw))
	for _, r := range raw {
		s, err := scenarios.ParseSet(r)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
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
func (pl *sweepPlan) checkPath(path, value string) error {
	sets := append(slices.Clip(pl.sets), scenarios.Set{Path: path, Value: value})
	_, err := scenarios.Parse(pl.data, pl.file, sets...)
	if prefix := "--set " + path + ": "; err != nil && strings.HasPrefix(err.Error(), prefix) {
		return errors.New(strings.TrimPrefix(err.Error(), prefix))
	}
	return nil
}

// place puts the scenario file into a sweep FieldError; after --set the
// lines are those of a re-encoded document, so they are dropped.
func (pl *sweepPlan) place(err error) error {
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
func (pl *sweepPlan) load(p sweep.Point) (*scenarios.Loaded, error) {
	sets := slices.Clip(pl.sets)
	for _, o := range p.Overrides {
		sets = append(sets, scenarios.Set{Path: o.Path, Value: o.Value})
	}
	l, err := scenarios.Parse(pl.data, pl.file, sets...)
	if err != nil {
		return nil, fmt.Errorf("sweep point %s: %w", describePoint(p), err)
	}
	l.Sweep = nil
	return l, nil
}

// replay returns how to run point p alone: the base scenario with the
// sweep's --set flags, then the point's overrides (a replica's seed among
// them, which --seed must repeat, since --seed wins over --set).
func (pl *sweepPlan) replay(p sweep.Point) replay {
	r := replay{file: pl.file, seed: pl.seed}
	for _, s := range pl.sets {
		r.sets = append(r.sets, s.String())
	}
	for _, o := range p.Overrides {
		r.sets = append(r.sets, scenarios.Set{Path: o.Path, Value: o.Value}.String())
		if seed, err := strconv.ParseUint(o.Value, 10, 64); o.Path == sweep.SeedPath && err == nil {
			r.seed = seed
		}
	}
	return r
}

// describePoint names a point in messages: "0003-1a2b3c4d (pools.decode.count=4)".
func describePoint(p sweep.Point) string {
	parts := make([]string, len(p.Overrides))
	for i, o := range p.Overrides {
		parts[i] = scenarios.Set{Path: o.Path, Value: o.Value}.String()
	}
	return p.ID + " (" + strings.Join(parts, ", ") + ")"
}

// newSweepManifest builds sweep.json's contents: the base scenario's identity
// (name and a hash of its effective YAML without the sweep block) and the
// point list with its hash.
func newSweepManifest(base *scenarios.Loaded, columns []string, points []sweep.Point) (*sweepManifest, error) {
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
	return &sweepManifest{Version: sweepLayoutVersion, Scenario: base.Name, ScenarioSHA256: hexSHA256(eff),
		PointsSHA256: hexSHA256(list), Columns: columns, Points: points}, nil
}

func hexSHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
