package calibration

import (
	"io"
	"sync"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/calibrate"
	"handoff/scenarios/experiment"
)

// DefaultAccelerator is the accelerator a fit fits when Options names none.
const DefaultAccelerator = "h100-sxm"

// Options are what `handoff calibrate` runs.
type Options struct {
	Dir      string   // folder with calib-*.yaml and the measured CSVs
	Profiles string   // folder with splitwise/ and distserve/ step profiles (Fit)
	Sets     []string // --set path=value applied to every calibration scenario, in order
	Workers  int      // experiments simulated at once; 0 = one per core

	Fit          bool   // fit the accelerator's factors first
	Accelerator  string // the accelerator Fit fits; "" = DefaultAccelerator
	WriteCatalog string // catalog YAML file the fit starts from and is written into; "" = the built-in catalog, unwritten
	Date         string // provenance date (YYYY-MM-DD); "" = the newest measurement's
	LeaveOneOut  bool   // after the fit: refit without each model and predict it
	MaxEvals     int    // objective evaluations per fit; 0 = the library's default
	PD           bool   // also compare the measured P/D runs (calibrate.PDFile), when Dir has them
	FitPD        bool   // with Fit: then fit the MoE terms to the P/D runs on the accelerator (implies PD)

	Simulate experiment.Simulate   // nil: calibrate.Simulate
	Log      io.Writer             // the fit's status lines; nil: dropped
	Progress func(simulations int) // after each simulation, with the count so far; nil: none
}

// Report is a finished calibration: what the report shows.
type Report struct {
	results   []calibrate.Result   // the comparison (at the fit, with Fit)
	src       *calibrate.Source    // with Fit: what was fitted to
	fit       *calibrate.Fitted    // with Fit
	heldOut   []calibrate.HeldOut  // with LeaveOneOut
	pd        []calibrate.PDResult // with PD: the measured P/D runs (at the fit, with Fit)
	moe       *calibrate.Fitted    // with FitPD: the second stage, the MoE terms (pdStages[0].fit)
	moeParams []calibrate.Param    // what it fitted
	pdStages  []pdStage            // with FitPD: the fitted accelerator's second stage, then its borrowers'
	date      string               // with Fit: the provenance date
}

// Calibrate runs the calibration set (after fitting, with Fit) and
// returns the report; the caller renders it (WriteMarkdown, WriteJSON).
// With Fit and WriteCatalog, the fitted factors are written into that
// file. A panic in a simulation becomes an error that says how to replay
// it.
func Calibrate(opts Options) (*Report, error) {
	sets, err := experiment.ParseSets(opts.Sets)
	if err != nil {
		return nil, err
	}
	r := &runner{opts: opts, sets: sets}
	r.log = lockedWriter{mu: &r.mu, w: opts.Log}
	rep := &Report{}
	if opts.Fit {
		err = r.fit(rep)
	} else {
		err = r.compare(rep)
	}
	if err != nil {
		return nil, err
	}
	if err := r.comparePD(rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// Unserved returns the first experiment's (then P/D run's)
// unserved-requests error, or nil.
func (rep *Report) Unserved() error {
	for _, res := range rep.results {
		if res.Unserved != nil {
			return res.Unserved
		}
	}
	for _, res := range rep.pd {
		if res.Unserved != nil {
			return res.Unserved
		}
	}
	return nil
}

// runner is one Calibrate: its options and the state its simulations
// share.
type runner struct {
	opts Options
	sets []scenarios.Set
	log  io.Writer // opts.Log, under mu

	mu   sync.Mutex // serialises Progress and the status lines
	sims int
}

// compare simulates every experiment at the catalog's factors.
func (r *runner) compare(rep *Report) error {
	exps, err := calibrate.ReadMeasured(r.opts.Dir)
	if err != nil {
		return err
	}
	rep.results, err = calibrate.Run(exps, r.options(nil))
	return err
}

// comparePD fills rep.pd with PD or FitPD: the fit's P/D results when it
// fitted to them, else the runs simulated at the fit (or the catalog).
func (r *runner) comparePD(rep *Report) error {
	if !r.opts.PD && !r.opts.FitPD || rep.moe != nil { // fitMoE simulated them at the fit
		return nil
	}
	cfgs, err := calibrate.ReadPD(r.opts.Dir)
	if err != nil || len(cfgs) == 0 { // a folder without P/D runs
		return err
	}
	var hw *calibrate.Hardware
	if rep.fit != nil {
		hw = &rep.fit.Hardware
	}
	rep.pd, err = calibrate.RunPD(cfgs, r.options(hw))
	return err
}

// options are calibrate's options at hw (nil: the catalog's factors).
func (r *runner) options(hw *calibrate.Hardware) calibrate.Options {
	return calibrate.Options{Sets: r.sets, Hardware: hw, Workers: r.opts.Workers, Simulate: r.simulate}
}

// simulate runs one calibration scenario with opts.Simulate (nil:
// calibrate.Simulate), turning a panic into an error that says how to
// replay the run, and counts it.
func (r *runner) simulate(l *scenarios.Loaded) (recs []results.Record, err error) {
	rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: r.opts.Sets}
	defer experiment.RecoverRun(&err, &rp)
	defer r.simulated()
	if r.opts.Simulate == nil {
		return calibrate.Simulate(l)
	}
	_, res, err := r.opts.Simulate(l, experiment.KeepRecords)
	if err != nil {
		return nil, err
	}
	return res.Records, nil
}

// simulated counts one more simulation and reports it.
func (r *runner) simulated() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sims++
	if r.opts.Progress != nil {
		r.opts.Progress(r.sims)
	}
}

// lockedWriter writes to w (nil: nowhere) under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	if l.w == nil {
		return len(b), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
