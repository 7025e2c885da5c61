package main

import (
	stdcmp "cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"handoff/results/outdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/search"
)

// goodputOptions are the flags of `handoff goodput`.
type goodputOptions struct {
	scenario  string
	outDir    string
	sets      []string
	seed      uint64
	target    float64 // attainment target; 0 = the scenario's slo.attainment
	tolerance float64 // relative width of the final bracket
	maxRuns   int     // runs per search (strict and loose each)
	progress  bool    // --progress: draw the progress line on stderr even when it is no terminal
	json      bool    // --json: print the result as JSON instead of the table

	stderr   io.Writer    // the progress line's and warnings; nil = none
	simulate simulateFunc // nil: simulate
}

// newGoodputCmd builds `handoff goodput`. runF does the work once the flags
// are parsed; nil means runGoodput (tests pass their own to check parsing).
func newGoodputCmd(stdout io.Writer, runF func(*goodputOptions, io.Writer) error) *cobra.Command {
	if runF == nil {
		runF = runGoodput
	}
	opts := &goodputOptions{}
	cmd := &cobra.Command{
		Use:   "goodput SCENARIO",
		Short: "Find the highest arrival rate the fleet serves within its SLO",
		Long: "goodput finds the max goodput (DistServe's goodput): it scales the workload's arrival rate\n" +
			"(workload.rate_scale) and bisects for the highest rate at which the share of requests meeting\n" +
			"both the TTFT and the TPOT limit stays at or above the target, also per GPU. It reports\n" +
			"DistServe's looser variant too: TTFT and TPOT each within their limits for the target share of\n" +
			"requests (at 0.9: P90 TTFT and P90 TPOT under the limits). Each run's request goodput (its\n" +
			"requests within both limits per second of the run) is in the table. Every run uses the same\n" +
			"seed; the search assumes attainment falls as the rate rises.",
		Example: "  handoff goodput scenarios/quickstart.yaml\n" +
			"  handoff goodput scenarios/quickstart.yaml --target 0.99 --tolerance 0.05 -o out",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.scenario, opts.stderr = args[0], cmd.ErrOrStderr()
			if err := opts.check(); err != nil {
				return err
			}
			return runF(opts, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.outDir, "out", "o", "", "write goodput.csv, the attainment plot into DIR/plots and each finished run "+
		"into DIR/probes (a rerun on DIR reuses them), to `DIR`")
	f.BoolVar(&opts.progress, "progress", false,
		"draw the progress line (runs done, the current bracket) on stderr even when it is not a terminal")
	f.BoolVar(&opts.json, "json", false, "print the curve and both answers as JSON on stdout instead of the table "+
		"(the progress line stays on stderr)")
	scenarioFlags(f, &opts.sets, &opts.seed)
	f.Float64Var(&opts.target, "target", 0, "attainment target in (0, 1]; default the scenario's slo.attainment")
	f.Float64Var(&opts.tolerance, "tolerance", search.DefaultTolerance,
		"stop when the bracket [lo, hi) of rates has hi/lo − 1 below this")
	f.IntVar(&opts.maxRuns, "max-runs", search.DefaultMaxRuns, "runs at most per search (`N`)")
	return cmd
}

// check rejects flag values the search cannot use.
func (o *goodputOptions) check() error {
	switch {
	case o.target != 0 && !(o.target > 0 && o.target <= 1):
		return fmt.Errorf("--target must be in (0, 1], got %g", o.target)
	case !(o.tolerance > 0 && o.tolerance < 1):
		return fmt.Errorf("--tolerance must be in (0, 1), got %g", o.tolerance)
	case o.maxRuns < 1:
		return fmt.Errorf("--max-runs must be positive, got %d", o.maxRuns)
	}
	return nil
}

// goodputSearch is a finished goodput command: what was measured and found.
type goodputSearch struct {
	scenario      string
	sets          []string     // the command's --set flags, for replays
	simulate      simulateFunc // nil: simulate
	target        float64
	baseRPS       float64 // the scenario's own offered rate
	tolerance     float64
	strict, loose search.Bracket
	curve         []probe // every run, by rate

	store *probeStore // where runs are saved and found
	line  *progress
}

// runGoodput measures the scenario's goodput, prints the curve and the
// answers, and writes the files. A panic becomes an error that says how to
// replay the run (runAt names the rate).
func runGoodput(opts *goodputOptions, stdout io.Writer) (err error) {
	if opts.outDir != "" {
		if err := outdir.CheckDir("-o", opts.outDir); err != nil {
			return err
		}
	}
	l, err := loadScenario(opts.scenario, opts.sets, opts.seed)
	if err != nil {
		return err
	}
	rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: opts.sets}
	defer experiment.RecoverRun(&err, &rp)
	g, err := measureGoodput(l, opts)
	if err != nil {
		return err
	}
	write := g.writeTable
	if opts.json {
		write = g.writeJSON
	}
	if err := write(stdout); err != nil {
		return err
	}
	if opts.outDir != "" {
		if err := g.writeFiles(opts.outDir); err != nil {
			return err
		}
	}
	return incomplete(g.unserved())
}

// unserved reports the runs that left requests unserved (dropped or
// failed), naming the lowest rate's first, or returns nil.
func (g *goodputSearch) unserved() error {
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
func measureGoodput(l *scenarios.Loaded, opts *goodputOptions) (*goodputSearch, error) {
	g := &goodputSearch{scenario: l.Name, sets: opts.sets, simulate: opts.simulate, target: opts.target, tolerance: opts.tolerance,
		line: newProgress(opts.stderr, opts.progress, -1, "goodput")}
	defer g.line.finish()
	if g.target == 0 {
		g.target = l.SLO.Attainment
	}
	var err error
	if g.store, err = newProbeStore(opts.outDir, l, opts.stderr); err != nil {
		return nil, err
	}
	if g.baseRPS, err = baseRate(l); err != nil {
		return nil, err
	}
	runs := map[float64]probe{}
	loose := false
	measureAt := func(scale float64) (probe, error) {
		if m, ok := runs[scale]; ok {
			return m, nil
		}
		m, err := g.runAt(l, scale)
		if err == nil {
			runs[scale] = m
			g.line.update(int64(len(runs)), g.progressText(runs, loose))
		}
		return m, err
	}
	b := scaleBounds(l.Workload.RateScale)
	b.Tolerance, b.MaxRuns = opts.tolerance, opts.maxRuns
	g.strict, err = b.Search(func(s float64) (bool, error) {
		m, err := measureAt(s)
		return m.meetsStrict(g.target), err
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
	slices.SortFunc(g.curve, func(a, b probe) int { return stdcmp.Compare(a.Scale, b.Scale) })
	return g, nil
}

// searchLoose finds the loose variant's bracket, starting from what the
// strict search measured: the lowest rate that missed loosely and the
// highest below it that met. Meeting both limits together implies meeting
// each, so the strict runs usually bracket the loose goodput already, and
// re-measured scales cost no run.
func (g *goodputSearch) searchLoose(b search.Bisection, runs map[float64]probe,
	measureAt func(float64) (probe, error)) (search.Bracket, error) {
	meets := func(s float64) (bool, error) {
		m, err := measureAt(s)
		return m.meetsLoose(g.target), err
	}
	lo, hi := 0.0, math.Inf(1)
	for s, m := range runs {
		if !m.meetsLoose(g.target) {
			hi = min(hi, s)
		}
	}
	for s, m := range runs {
		if m.meetsLoose(g.target) && s < hi {
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

// runAt simulates the scenario with its arrival rate scaled by scale.
func (g *goodputSearch) runAt(l *scenarios.Loaded, scale float64) (m probe, err error) {
	scaled := *l
	scaled.Workload.RateScale = l.Workload.RateScale * scale
	own := []string{"workload.rate_scale=" + strconv.FormatFloat(scaled.Workload.RateScale, 'g', -1, 64)}
	rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: append(slices.Clip(g.sets), own...)}
	defer experiment.RecoverRun(&err, &rp)
	m, err = g.store.run(&scaled, own, g.simulate)
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
func (g *goodputSearch) rateOf(scale float64) float64 {
	if math.IsInf(scale, 1) {
		return scale
	}
	return scale * g.baseRPS
}

// progressText is the progress line's text: the runs done and the bracket
// of rates the current search (strict, or loose) holds so far.
func (g *goodputSearch) progressText(runs map[float64]probe, loose bool) string {
	lo, hi, which := 0.0, math.Inf(1), "strict"
	if loose {
		which = "loose"
	}
	for s, m := range runs {
		meets := m.meetsStrict(g.target)
		if loose {
			meets = m.meetsLoose(g.target)
		}
		if meets {
			lo = max(lo, s)
		} else {
			hi = min(hi, s)
		}
	}
	return fmt.Sprintf("%d runs; %s goodput in [%.4g, %.4g) req/s", len(runs), which, g.rateOf(lo), g.rateOf(hi))
}
