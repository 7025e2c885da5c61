package experiment

import (
	"io"

	"handoff/results"
	"handoff/scenarios"
	"handoff/sim"
)

// Simulate is Run's shape with the warnings' writer bound: what the
// probes, the planner and the sweep runner call to simulate one scenario.
// Their options hold one (nil: Run), so that a caller (a test) can put a
// failing or panicking one in its place.
type Simulate func(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error)

// Or returns f, or Run with its warnings on warn when f is nil.
func (f Simulate) Or(warn io.Writer) Simulate {
	if f != nil {
		return f
	}
	return func(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
		return Run(l, warn, configure...)
	}
}

// OnCores returns f, or RunOn on cores cores with its warnings on warn
// when f is nil.
func (f Simulate) OnCores(warn io.Writer, cores int) Simulate {
	if f != nil {
		return f
	}
	return func(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
		return RunOn(l, warn, cores, configure...)
	}
}

// ParseSets parses --set flags, path=value each.
func ParseSets(raw []string) ([]scenarios.Set, error) {
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

// LoadReplay is Load, and how to replay a run of what it loaded: the
// Replay that the caller's deferred RecoverRun names a panic with.
func LoadReplay(path string, rawSets []string, seed uint64) (*scenarios.Loaded, *Replay, error) {
	l, err := Load(path, rawSets, seed)
	if err != nil {
		return nil, nil, err
	}
	return l, &Replay{File: l.File, Seed: l.Seed, Sets: rawSets}, nil
}

// Load loads a scenario file with --set flags applied in order, and the
// seed replaced unless it is 0.
func Load(path string, rawSets []string, seed uint64) (*scenarios.Loaded, error) {
	sets, err := ParseSets(rawSets)
	if err != nil {
		return nil, err
	}
	l, err := scenarios.Load(path, sets...)
	if err != nil {
		return nil, err
	}
	if seed != 0 {
		l.Seed = seed
	}
	return l, nil
}
