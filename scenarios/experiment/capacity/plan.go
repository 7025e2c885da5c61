package capacity

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"handoff/models/strictyaml"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/search"
)

// PlanOptions are what `handoff plan` searches.
type PlanOptions struct {
	Scenario   string   // the scenario file
	Sets       []string // --set path=value, in order
	Seed       uint64   // 0: the scenario's
	Dir        string   // where every fleet's run is saved and found again (probes/); "": nowhere
	TargetRate float64  // req/s the fleet must serve
	Target     float64  // attainment target in (0, 1]; 0: the scenario's slo.attainment
	Counts     []string // POOL=MIN:MAX, overriding the plan block (ParseCount)
	MaxCount   int      // count range [1, MaxCount] of every pool when the scenario has no plan block
	MaxRuns    int      // fleets simulated at most
	Exhaustive bool     // run the whole grid instead of the pruned search

	Simulate experiment.Simulate         // nil: experiment.Run, warnings on Warn
	Warn     io.Writer                   // warnings (damaged saved runs), one line each; nil: dropped
	Notes    io.Writer                   // the choices dropped before the search (a TP the model does not fit), one line each; nil: dropped
	Progress func(runs int, text string) // after each new fleet: the fleets run and the cheapest that met the target; nil: none
}

// ParseCount splits "POOL=MIN:MAX".
func ParseCount(s string) (string, []int, error) {
	name, rng, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rng, ":")
	a, errA := strconv.Atoi(strings.TrimSpace(lo))
	b, errB := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || !ok2 || name == "" || errA != nil || errB != nil || a < 1 || a > b || b > search.MaxCount {
		return "", nil, fmt.Errorf("--count %q: want POOL=MIN:MAX with 1 ≤ MIN ≤ MAX ≤ %d, e.g. decode=1:8", s, search.MaxCount)
	}
	return name, []int{a, b}, nil
}

// Plan searches for the cheapest fleet. A search that ran out of runs is
// no error here: the planner holds it (SearchErr) with what it ran, to
// render before it is reported. A panic becomes an error that says how to
// replay the run (evaluate names the fleet).
func Plan(opts PlanOptions) (p *Planner, err error) {
	l, rp, err := load(opts.Dir, opts.Scenario, opts.Sets, opts.Seed)
	if err != nil {
		return nil, err
	}
	if err := checkScalable(l, "plan"); err != nil {
		return nil, err
	}
	defer experiment.RecoverRun(&err, rp)
	opts.Simulate = opts.Simulate.Or(opts.Warn)
	if p, err = newPlanner(l, &opts); err != nil {
		return nil, err
	}
	if opts.Notes != nil {
		for _, note := range p.notes {
			fmt.Fprintln(opts.Notes, note)
		}
	}
	searchF := p.space.Cheapest
	if opts.Exhaustive {
		searchF = p.space.Grid
	}
	choice, searchErr := searchF(p.evaluate, opts.MaxRuns)
	if searchErr != nil && !errors.Is(searchErr, search.ErrRunBudget) {
		return nil, searchErr
	}
	p.choice, p.searchErr = choice, searchErr
	return p, nil
}

// SearchErr is search.ErrRunBudget (wrapped) when the search ran out of
// runs before it could choose, else nil.
func (p *Planner) SearchErr() error { return p.searchErr }

// planSpace resolves the plan block, with --count and --max-count, against
// the scenario's pools, and keeps each autoscaled pool's counts within its
// bounds (notes say where it narrowed them). Errors in the plan block name
// its line.
func planSpace(l *scenarios.Loaded, opts *PlanOptions) (search.Space, []string, error) {
	pools := make([]search.ScenarioPool, len(l.Pools))
	names := make([]string, len(l.Pools))
	for i, p := range l.Pools {
		pools[i] = search.ScenarioPool{Name: p.Name, Count: p.Count, Hardware: p.Hardware, TP: p.TP, PP: p.PP}
		names[i] = p.Name
	}
	plan := &search.Plan{Pools: map[string]search.PlanPool{}}
	var defaultCount []int
	if l.Plan != nil {
		maps.Copy(plan.Pools, l.Plan.Pools)
	} else {
		defaultCount = []int{1, opts.MaxCount}
	}
	flags := map[string]string{} // pool → the --count that set its range
	for _, c := range opts.Counts {
		name, rng, _ := ParseCount(c) // checked with the flags
		pp, ok := plan.Pools[name]
		if !ok && !slices.Contains(names, name) {
			return search.Space{}, nil, fmt.Errorf("--count %s: no pool named %q (have %s)", c, name, strings.Join(names, ", "))
		}
		pp.Count = rng
		plan.Pools[name] = pp
		flags[name] = c
	}
	s, err := plan.Space(pools, defaultCount)
	if err != nil {
		return s, nil, locateInFile(l.File, err)
	}
	notes, err := autoscaleCounts(l, &s, plan, flags)
	return s, notes, err
}

// autoscaleCounts keeps the counts the plan searches for an autoscaled
// pool, its size at the start, within the autoscaler's [min, max]: the
// default range (--max-count) is narrowed to them, with a note; a range
// the plan block or a --count gives is refused when it leaves them.
func autoscaleCounts(l *scenarios.Loaded, s *search.Space, plan *search.Plan, flags map[string]string) ([]string, error) {
	var notes []string
	for i := range s.Pools {
		ps, a := &s.Pools[i], l.Pools[i].Autoscale
		if a == nil || ps.MinCount >= a.Min && ps.MaxCount <= a.Max {
			continue
		}
		leaves := fmt.Sprintf("[%d, %d] leaves the pool's autoscale bounds [min %d, max %d]: a plan's count is the "+
			"pool's size at the start, which its autoscaler keeps within them", ps.MinCount, ps.MaxCount, a.Min, a.Max)
		switch {
		case flags[ps.Name] != "":
			return nil, fmt.Errorf("--count %s: %s", flags[ps.Name], strings.TrimPrefix(leaves, fmt.Sprintf("[%d, %d] ", ps.MinCount, ps.MaxCount)))
		case len(plan.Pools[ps.Name].Count) > 0:
			return nil, locateInFile(l.File, strictyaml.Fieldf("plan.pools."+ps.Name+".count", "%s", leaves))
		}
		lo, hi := max(ps.MinCount, a.Min), min(ps.MaxCount, a.Max)
		if lo > hi {
			return nil, fmt.Errorf("--max-count %d: pool %s autoscales within [%d, %d]: raise --max-count to at least %d, "+
				"or give the pool a count range with --count", ps.MaxCount, ps.Name, a.Min, a.Max, a.Min)
		}
		ps.MinCount, ps.MaxCount = lo, hi
		notes = append(notes, fmt.Sprintf("pool %s autoscales within [%d, %d]: its counts are searched within them", ps.Name, a.Min, a.Max))
	}
	return notes, nil
}

// locateInFile places a field error from the plan block at its line in
// the scenario file. The file is read again because the loaded scenario
// keeps its node tree to itself.
func locateInFile(file string, err error) error {
	var root yaml.Node
	if data, rerr := os.ReadFile(file); rerr == nil && yaml.Unmarshal(data, &root) == nil {
		return strictyaml.Locate(&root, file, "", err)
	}
	return strictyaml.Locate(nil, file, "", err)
}
