package calibrate

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"handoff/hardware"
	"handoff/models/units"
	"handoff/results"
	"handoff/scenarios"
	"handoff/sim"
)

// Hardware is the accelerator (and its scale-up link) a run prices the
// calibration pools with, in place of the catalog's entry of that name.
type Hardware struct {
	Accel hardware.Accelerator
	Link  hardware.Link // Accel's scale-up link; ignored when its name is ""
}

// SimulateFunc builds and runs a loaded scenario and returns its records.
type SimulateFunc func(l *scenarios.Loaded) ([]results.Record, error)

// Options configure Run.
type Options struct {
	Sets     []scenarios.Set // overrides applied to every scenario
	Hardware *Hardware       // nil: the catalog's factors
	Others   []Hardware      // other accelerators at fitted values (their own P/D stage), put in after Hardware
	Workers  int             // experiments run at once; 0 = GOMAXPROCS
	Simulate SimulateFunc    // nil: Simulate
}

// Row is one stage, simulated and measured. Times are s.
type Row struct {
	Stage
	Completed, Total  int     // simulated requests completed / arrived in the stage
	TTFTMean, TTFTP99 float64 // over completed requests
	PerToken          float64 // mean over completed requests of (finish − first token)/(output − 1)
	E2EMean, E2EP99   float64 // over completed requests
}

// Result is one experiment's simulated stages.
type Result struct {
	Rows     []Row
	Unserved error // requests the simulation dropped or failed, naming the first; nil if none
}

// Run simulates every experiment with opts and returns their results in
// the order of exps. Experiments run on up to opts.Workers goroutines;
// each result depends only on its experiment, so the output equals a
// serial run's. The first error (in experiment order) is returned.
func Run(exps []Experiment, opts Options) ([]Result, error) {
	out := make([]Result, len(exps))
	err := runParallel(len(exps), opts.Workers, func(i int) error {
		var err error
		out[i], err = runExperiment(exps[i], opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// runParallel calls do(0) … do(n−1) on up to workers goroutines (0 =
// GOMAXPROCS) and returns the first error in index order.
func runParallel(n, workers int, do func(i int) error) error {
	errs := make([]error, n)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = do(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runExperiment loads and simulates one experiment and summarises its stages.
func runExperiment(exp Experiment, opts Options) (Result, error) {
	l, err := scenarios.Load(exp.Scenario, opts.Sets...)
	if err != nil {
		return Result{}, err
	}
	opts.applyHardware(l)
	simulate := opts.Simulate
	if simulate == nil {
		simulate = Simulate
	}
	recs, err := simulate(l)
	if err != nil {
		return Result{}, err
	}
	var res Result
	startNs := int64(0)
	for _, s := range exp.Stages {
		endNs := startNs + int64(s.DurationS*1e9)
		res.Rows = append(res.Rows, stageRow(s, recs, startNs, endNs))
		startNs = endNs
	}
	res.Unserved = results.Unserved(recs, l.File)
	return res, nil
}

// applyHardware puts the options' fitted accelerators into l's catalog.
func (o Options) applyHardware(l *scenarios.Loaded) {
	o.Hardware.apply(l)
	for i := range o.Others {
		o.Others[i].apply(l)
	}
}

// apply puts h's accelerator and link into l's catalog in place of the
// entries of their names; a nil h leaves the catalog as it is.
func (h *Hardware) apply(l *scenarios.Loaded) {
	if h == nil {
		return
	}
	spec := h.Accel.Spec() // its factors as h holds them, borrowed ones included
	spec.MFU, spec.MBU, spec.StepOverhead = h.Accel.MFU, h.Accel.MBU, units.Duration(h.Accel.StepOverheadNs)
	l.Catalog.Accelerators = append(slices.Clone(l.Catalog.Accelerators), spec)
	if h.Link.Name != "" {
		l.Catalog.Links = append(slices.Clone(l.Catalog.Links), h.Link.Spec())
	}
}

// Simulate builds and runs l. A workload with no requests is an error: a
// comparison with nothing would read as a cluster that served nothing.
func Simulate(l *scenarios.Loaded) ([]results.Record, error) {
	b, err := l.Build()
	if err != nil {
		return nil, err
	}
	defer b.Close()
	res, err := sim.Run(b.Config)
	if err != nil {
		return nil, err
	}
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("%s: the workload has no requests: there is nothing to measure", l.File)
	}
	return res.Records, nil
}

// stageRow summarises the records that arrived during one stage.
func stageRow(s Stage, recs []results.Record, startNs, endNs int64) Row {
	row := Row{Stage: s}
	var ttft, e2e, tok []float64
	for i := range recs {
		r := &recs[i]
		if r.ArrivalNs < startNs || r.ArrivalNs >= endNs {
			continue
		}
		row.Total++
		if r.Status != results.Completed {
			continue
		}
		row.Completed++
		ttft = append(ttft, float64(r.FirstTokenNs-r.ArrivalNs)/1e9)
		e2e = append(e2e, float64(r.FinishNs-r.ArrivalNs)/1e9)
		if r.OutputTokens > 1 {
			tok = append(tok, float64(r.FinishNs-r.FirstTokenNs)/1e9/float64(r.OutputTokens-1))
		}
	}
	row.TTFTMean, row.TTFTP99 = meanP99(ttft)
	row.E2EMean, row.E2EP99 = meanP99(e2e)
	row.PerToken, _ = meanP99(tok)
	return row
}

func meanP99(xs []float64) (mean, p99 float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	slices.Sort(xs)
	for _, x := range xs {
		mean += x
	}
	return mean / float64(len(xs)), results.Quantile(xs, 0.99)
}
