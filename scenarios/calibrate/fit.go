package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/optimize"

	"handoff/models/llm"
	"handoff/scenarios"
)

// Residual weights: each non-overloaded stage contributes the relative
// errors of its TTFT mean, E2E mean and decode time per token at weight 1
// and of its TTFT p99 at weightP99: a tail carries what a simulator cannot
// know, such as the first stage of the Mixtral codegen experiment, whose
// TTFT p99 is 7x its second stage's (0.48 s against 0.068 s; the warm-up
// of its kernels), and lets a few such stages outweigh the rest.
const weightP99 = 0.1

// Problem is one fit: the measurements, the free parameters and where to
// start. One parameter set serves every experiment and every step point.
type Problem struct {
	Experiments []Experiment // serving measurements; overloaded stages are left out of the residuals
	Steps       []StepPoint  // single-step pseudo-measurements (profiles)
	Start       Hardware     // the hardware fitted: fields not in Params stay as they are; each Param starts at its Init
	Params      []Param
	StepWeight  float64 // weight of the step block's mean square against the serving block's; 0 = 1
	// PD, when not empty, adds the measured P/D runs to the objective:
	// their block's mean square (pdMeanSquare) at weight 1. Without them
	// the objective is exactly the serving and step blocks'.
	PD []PDConfig
	// Others are accelerators at values fitted before (another's P/D
	// stage), priced as such in every simulation of the fit.
	Others []Hardware
	// WarmStart starts every parameter at Start's value instead of its
	// Init: a refit on part of the data, started from the whole data's fit.
	WarmStart bool

	Sets     []scenarios.Set // overrides applied to every scenario
	Workers  int             // experiments simulated at once; 0 = GOMAXPROCS
	Simulate SimulateFunc    // nil: Simulate
	MaxEvals int             // objective evaluations at most; 0 = 100 per parameter

	Progress      io.Writer     // nil: silent
	ProgressEvery time.Duration // 0 = 5 s
}

// Fitted is the outcome of a fit.
type Fitted struct {
	Hardware       Hardware  // Start with the fitted parameters
	Values         []float64 // the fitted parameters, in Params order
	Objective      float64   // weighted mean square of the residuals at the fit
	StartObjective float64   // the same at Start
	Evals          int       // objective evaluations
	ServingRMS     float64   // root mean square of the serving residuals (weighted)
	StepRMS        float64   // root mean square of the step residuals
	PDRMS          float64   // root mean square of the P/D residuals; 0 without Problem.PD
	Results        []Result  // Experiments simulated at the fit
	PDResults      []PDResult
}

// objective is one evaluation of a Problem at h.
type objective struct {
	value, servingRMS, stepRMS, pdRMS float64
	results                           []Result
	pdResults                         []PDResult
}

// evaluate simulates the experiments and prices the step points at h.
func (p *Problem) evaluate(h *Hardware, models *llm.Catalog) (objective, error) {
	var o objective
	var err error
	if len(p.Experiments) > 0 {
		o.results, err = Run(p.Experiments, Options{Sets: p.Sets, Hardware: h, Others: p.Others, Workers: p.Workers, Simulate: p.Simulate})
		if err != nil {
			return o, err
		}
		o.servingRMS = math.Sqrt(servingMeanSquare(o.results))
	}
	if len(p.Steps) > 0 {
		res, err := stepResiduals(nil, p.Steps, h, models)
		if err != nil {
			return o, err
		}
		o.stepRMS = math.Sqrt(meanSquare(res))
	}
	w := p.StepWeight
	if w == 0 {
		w = 1
	}
	o.value = o.servingRMS*o.servingRMS + w*o.stepRMS*o.stepRMS
	if len(p.PD) > 0 {
		o.pdResults, err = RunPD(p.PD, Options{Sets: p.Sets, Hardware: h, Others: p.Others, Workers: p.Workers, Simulate: p.Simulate})
		if err != nil {
			return o, err
		}
		ms := pdMeanSquare(PDRows(o.pdResults))
		o.pdRMS = math.Sqrt(ms)
		o.value += ms
	}
	return o, nil
}

// servingMeanSquare is the weighted mean square of the relative errors of
// the non-overloaded stages. A stage the simulation completed nothing of
// counts as a 100% error in each figure.
func servingMeanSquare(results []Result) float64 {
	var sq weightedSquares
	for _, res := range results {
		for _, r := range res.Rows {
			if r.Overloaded() {
				continue
			}
			sq.add(1, r.TTFTMean, r.Stage.TTFTMean)
			sq.add(1, r.E2EMean, r.Stage.E2EMean)
			sq.add(1, r.PerToken, r.Stage.PerToken())
			sq.add(weightP99, r.TTFTP99, r.Stage.TTFTP99)
		}
	}
	return sq.mean()
}

func meanSquare(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x * x
	}
	if len(xs) == 0 {
		return 0
	}
	return s / float64(len(xs))
}

// Fit minimises the problem's objective by Nelder–Mead over the
// parameters, each mapped to an unbounded coordinate (Param.toU). The
// objective is a deterministic simulation, so the same problem gives the
// same fit. It returns the first error an evaluation met.
func Fit(p Problem) (Fitted, error) {
	if len(p.Params) == 0 {
		return Fitted{}, errors.New("calibrate: no parameters to fit")
	}
	models := llm.Default()
	at := func(u []float64) Hardware {
		h := p.Start
		for i, q := range p.Params {
			q.Set(&h, q.fromU(u[i]))
		}
		return h
	}
	u0 := make([]float64, len(p.Params))
	for i, q := range p.Params {
		v := q.Get(&p.Start)
		if q.Init != 0 && !p.WarmStart {
			v = q.Init
		}
		u0[i] = q.toU(v)
	}
	start, err := p.evaluate(ptr(at(u0)), models)
	if err != nil {
		return Fitted{}, err
	}
	rec := &progress{w: p.Progress, every: p.ProgressEvery, best: start.value, last: time.Now()}
	problem := optimize.Problem{Func: func(u []float64) float64 {
		if rec.err != nil {
			return math.Inf(1)
		}
		o, err := p.evaluate(ptr(at(u)), models)
		if err != nil {
			rec.err = err
			return math.Inf(1)
		}
		rec.saw(o.value)
		return o.value
	}}
	maxEvals := p.MaxEvals
	if maxEvals == 0 {
		maxEvals = 100 * len(p.Params)
	}
	x, err := restarted(problem, u0, maxEvals, rec)
	if rec.err != nil {
		return Fitted{}, rec.err
	}
	if err != nil {
		return Fitted{}, err
	}
	h := at(x)
	for _, q := range p.Params {
		q.Set(&h, q.quantize(q.Get(&h)))
	}
	return p.fitted(h, start.value, rec.evals, models)
}

// restarted runs Nelder–Mead from u0 and restarts it from its best point
// with a fresh simplex while a round improves the objective by more than
// 0.5% and evaluations remain: a simplex over a simulation's slightly
// rugged objective collapses early, and a restart is the standard remedy.
func restarted(problem optimize.Problem, u0 []float64, maxEvals int, rec *progress) ([]float64, error) {
	x, best := u0, math.Inf(1)
	for round := 0; round < 6 && rec.evals < maxEvals; round++ {
		settings := &optimize.Settings{FuncEvaluations: maxEvals - rec.evals, Recorder: rec,
			Converger: &optimize.FunctionConverge{Absolute: 1e-6, Relative: 1e-4, Iterations: 4 * len(u0)}}
		res, err := optimize.Minimize(problem, x, settings, &optimize.NelderMead{SimplexSize: 0.5})
		if rec.err != nil {
			return nil, rec.err
		}
		if err != nil && res == nil {
			return nil, fmt.Errorf("calibrate: fit: %w", err)
		}
		improved := res.F < best*(1-0.005)
		if res.F < best {
			x, best = res.X, res.F
		}
		if !improved {
			break
		}
	}
	return x, nil
}

// fitted evaluates the problem once more at h, for the rows of the fit.
func (p *Problem) fitted(h Hardware, startValue float64, evals int, models *llm.Catalog) (Fitted, error) {
	o, err := p.evaluate(&h, models)
	if err != nil {
		return Fitted{}, err
	}
	f := Fitted{Hardware: h, Objective: o.value, StartObjective: startValue, Evals: evals,
		ServingRMS: o.servingRMS, StepRMS: o.stepRMS, PDRMS: o.pdRMS, Results: o.results, PDResults: o.pdResults}
	for _, q := range p.Params {
		f.Values = append(f.Values, q.Get(&h))
	}
	return f, nil
}

func ptr[T any](v T) *T { return &v }

// progress counts evaluations, keeps the best objective, prints them to w
// every few seconds, and stops the optimiser once an evaluation failed.
type progress struct {
	w     io.Writer
	every time.Duration
	evals int
	best  float64
	last  time.Time
	err   error
}

func (r *progress) saw(v float64) {
	r.evals++
	r.best = min(r.best, v)
	every := r.every
	if every == 0 {
		every = 5 * time.Second
	}
	if r.w != nil && time.Since(r.last) >= every {
		fmt.Fprintf(r.w, "calibrate: %d evaluations, best objective %.5g\n", r.evals, r.best)
		r.last = time.Now()
	}
}

// Init implements optimize.Recorder.
func (r *progress) Init() error { return nil }

// Record implements optimize.Recorder: it ends the run after a failed evaluation.
func (r *progress) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	return r.err
}

// HeldOut is one model left out of a fit and predicted by it.
type HeldOut struct {
	Model   string
	Fit     Fitted   // the fit without the model
	Results []Result // the model's experiments simulated at that fit
}

// LeaveOneOut fits p once without each model in turn (its experiments and
// step points) and simulates that model's experiments with the fit: how
// well the fitted factors carry to a model they never saw.
func LeaveOneOut(p Problem, models []string) ([]HeldOut, error) {
	var out []HeldOut
	for _, m := range models {
		q := p
		var held []Experiment
		q.Experiments = slices.DeleteFunc(slices.Clone(p.Experiments), func(e Experiment) bool {
			if e.Model() == m {
				held = append(held, e)
			}
			return e.Model() == m
		})
		q.Steps = slices.DeleteFunc(slices.Clone(p.Steps), func(s StepPoint) bool { return s.Model == m })
		if len(held) == 0 {
			return nil, fmt.Errorf("calibrate: leave-one-out: no experiment of model %q", m)
		}
		f, err := Fit(q)
		if err != nil {
			return nil, fmt.Errorf("calibrate: without %s: %w", m, err)
		}
		res, err := Run(held, Options{Sets: p.Sets, Hardware: &f.Hardware, Workers: p.Workers, Simulate: p.Simulate})
		if err != nil {
			return nil, err
		}
		out = append(out, HeldOut{Model: m, Fit: f, Results: res})
	}
	return out, nil
}

// Models returns the models of exps, in first-seen order.
func Models(exps []Experiment) []string {
	var out []string
	for _, e := range exps {
		if !slices.Contains(out, e.Model()) {
			out = append(out, e.Model())
		}
	}
	return out
}
