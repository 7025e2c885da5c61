package capacity

import (
	stdcmp "cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"handoff/results/outdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/search"
)

// GoodputOptions are what `handoff goodput` searches.
type GoodputOptions struct {
	Scenario  string   // the scenario file
	Sets      []string // --set path=value, in order
	Seed      uint64   // 0: the scenario's
	Dir       string   // where every run is saved and found again (probes/); "": nowhere
	Target    float64  // attainment target in (0, 1]; 0: the scenario's slo.attainment
	Tolerance float64  // relative width of the final bracket, in (0, 1)
	MaxRuns   int      // runs per search (strict and loose each), at least 1

	Simulate experiment.Simulate         // nil: experiment.Run, warnings on Warn
	Warn     io.Writer                   // warnings (damaged saved runs), one line each; nil: dropped
	Progress func(runs int, text string) // after each new run: the runs done and the bracket so far; nil: none
}

// GoodputSearch is a finished goodput search: what was measured and found.
type GoodputSearch struct {
	scenario      string
	sets          []string // the command's --set flags, for replays
	simulate      experiment.Simulate
	target        float64
	baseRPS       float64 // the scenario's own offered rate
	device        string  // what the fleet's devices are called ("GPU", "wafer", "device")
	tolerance     float64
	strict, loose search.Bracket
	curve         []Probe // every run, by rate

	store    *probeStore // where runs are saved and found
	progress func(runs int, text string)
}

// Goodput measures the scenario's goodput: the strict and the loose
// search over the arrival rate, every run saved in (and found again from)
// Dir. The caller renders the result (WriteTable, WriteJSON) and writes
// its files (WriteFiles). A panic becomes an error that says how to replay
// the run (runAt names the rate).
func Goodput(opts GoodputOptions) (g *GoodputSearch, err error) {
	l, rp, err := load(opts.Dir, opts.Scenario, opts.Sets, opts.Seed)
	if err != nil {
		return nil, err
	}
	if err := checkScalable(l, "goodput"); err != nil {
		return nil, err
	}
	defer experiment.RecoverRun(&err, rp)
	opts.Simulate = opts.Simulate.Or(opts.Warn)
	return measureGoodput(l, &opts)
}

// load is how Goodput and Plan start: the -o directory checked, the
// scenario loaded, and how to replay a run of it.
func load(dir, scenario string, sets []string, seed uint64) (*scenarios.Loaded, *experiment.Replay, error) {
	if dir != "" {
		if err := outdir.CheckDir("-o", dir); err != nil {
			return nil, nil, err
		}
	}
	return experiment.LoadReplay(scenario, sets, seed)
}

// Unserved reports the runs that left requests unserved (dropped or
// failed), naming the lowest rate's first, or returns nil.
func (g *GoodputSearch) Unserved() error {
	n, first := 0, -1
	for i, m := range g.curve {
		if m.unserved != nil {
			if n++; first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d runs left requests unserved; at %.4g× the arrival rate: %w",
		n, len(g.curve), g.curve[first].Scale, g.curve[first].unserved)
}

// measureGoodput learns the workload's own rate, then runs both searches;
// the loose one reuses the strict one's runs (see searchLoose).
func measureGoodput(l *scenarios.Loaded, opts *GoodputOptions) (*GoodputSearch, error) {
	g := &GoodputSearch{scenario: l.Name, sets: opts.Sets, simulate: opts.Simulate, target: opts.Target, tolerance: opts.Tolerance,
		progress: opts.Progress}
	if g.target == 0 {
		g.target = l.SLO.Attainment
	}
	var err error
	if g.store, err = newProbeStore(opts.Dir, l, opts.Warn); err != nil {
		return nil, err
	}
	if g.baseRPS, err = baseRate(l); err != nil {
		return nil, err
	}
	if g.device, err = deviceNoun(l); err != nil {
		return nil, err
	}
	runs := map[float64]Probe{}
	loose := false
	measureAt := func(scale float64) (Probe, error) {
		if m, ok := runs[scale]; ok {
			return m, nil
		}
		m, err := g.runAt(l, scale)
		if err == nil {
			runs[scale] = m
			if g.progress != nil {
				g.progress(len(runs), g.progressText(runs, loose))
			}
		}
		return m, err
	}
	b := scaleBounds(l.Workload.RateScale)
	b.Tolerance, b.MaxRuns = opts.Tolerance, opts.MaxRuns
	g.strict, err = b.Search(func(s float64) (bool, error) {
		m, err := measureAt(s)
		return m.MeetsStrict(g.target), err
	})
	if err != nil {
		return nil, err
	}
	loose = true
	g.loose, err = g.searchLoose(b, runs, measureAt)
	if err != nil {
		return nil, err
	}
	for _, m := range runs {
		g.curve = append(g.curve, m)
	}
	slices.SortFunc(g.curve, func(a, b Probe) int { return stdcmp.Compare(a.Scale, b.Scale) })
	return g, nil
}

// searchLoose finds the loose variant's bracket, starting from what the
// strict search measured: the lowest rate that missed loosely and the
// highest below it that met. Meeting both limits together implies meeting
// each, so the strict runs usually bracket the loose goodput already, and
// re-measured scales cost no run.
func (g *GoodputSearch) searchLoose(b search.Bisection, runs map[float64]Probe,
	measureAt func(float64) (Probe, error)) (search.Bracket, error) {
	meets := func(s float64) (bool, error) {
		m, err := measureAt(s)
		return m.MeetsLoose(g.target), err
	}
	lo, hi := 0.0, math.Inf(1)
	for s, m := range runs {
		if !m.MeetsLoose(g.target) {
			hi = min(hi, s)
		}
	}
	for s, m := range runs {
		if m.MeetsLoose(g.target) && s < hi {
			lo = max(lo, s)
		}
	}
	switch {
	case lo > 0 && !math.IsInf(hi, 1):
		return b.Narrow(search.Bracket{Lo: lo, Hi: hi}, meets)
	case lo > 0:
		b.Start = lo
	}
	return b.Search(meets)
}

// runAt simulates the scenario with its arrival rate scaled by scale. The
// scaled scenario is loaded from the file with the rate as one more --set,
// as the replay command loads it, so that it is checked as every run is and
// a replay runs what failed.
func (g *GoodputSearch) runAt(l *scenarios.Loaded, scale float64) (m Probe, err error) {
	own := []string{"workload.rate_scale=" + strconv.FormatFloat(l.Workload.RateScale*scale, 'g', -1, 64)}
	rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: append(slices.Clip(g.sets), own...)}
	defer experiment.RecoverRun(&err, &rp)
	scaled, err := experiment.Load(rp.File, rp.Sets, rp.Seed)
	if err == nil {
		m, err = g.store.run(scaled, own, g.simulate)
	}
	if err != nil {
		return m, fmt.Errorf("at %.4g× the arrival rate: %w", scale, err)
	}
	m.Scale, m.RateRPS = scale, scale*g.baseRPS
	return m, nil
}

// Limits of the loader on workload.rate_scale, which a search's scales
// multiply.
const (
	minRateScale = 1e-6
	maxRateScale = 1e6
)

// scaleBounds returns a Bisection whose scales keep the scenario's
// rate_scale (own) within the loader's limits.
func scaleBounds(own float64) search.Bisection {
	return search.Bisection{
		MinScale: max(search.DefaultMinScale, minRateScale/own),
		MaxScale: min(search.DefaultMaxScale, maxRateScale/own),
		Start:    min(max(1, minRateScale/own), maxRateScale/own),
	}
}

// rateOf converts a bracket end to a rate: 0 stays 0, +Inf stays +Inf.
func (g *GoodputSearch) rateOf(scale float64) float64 {
	if math.IsInf(scale, 1) {
		return scale
	}
	return scale * g.baseRPS
}

// progressText is the progress line's text: the runs done and the bracket
// of rates the current search (strict, or loose) holds so far.
func (g *GoodputSearch) progressText(runs map[float64]Probe, loose bool) string {
	lo, hi, which := 0.0, math.Inf(1), "strict"
	if loose {
		which = "loose"
	}
	for s, m := range runs {
		meets := m.MeetsStrict(g.target)
		if loose {
			meets = m.MeetsLoose(g.target)
		}
		if meets {
			lo = max(lo, s)
		} else {
			hi = min(hi, s)
		}
	}
	return fmt.Sprintf("%d runs; %s goodput in [%.4g, %.4g) req/s", len(runs), which, g.rateOf(lo), g.rateOf(hi))
}
