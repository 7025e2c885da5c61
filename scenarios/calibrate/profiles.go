package calibrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"handoff/models/llm"
	"handoff/models/parallel"
	"handoff/models/perf"
)

// StepPoint is one pseudo-measurement of a single engine step: a batch of
// a model at a TP degree that took Ms milliseconds.
type StepPoint struct {
	Source string // the file it came from and what it is, for reports
	Model  string // catalog model
	TP     int
	Batch  perf.Batch
	Ms     float64
}

// splitwiseModels maps Splitwise's model names to catalog models.
var splitwiseModels = map[string]string{"llama2-70b": "llama-2-70b"}

// SplitwisePoints reads a Splitwise perf_model.csv and returns, for rows of
// the named profile hardware ("h100-80gb", "a100-80gb") and a model in the
// catalog, two points per (TP, batch, prompt) averaged over repeats: the
// prefill of batch prompts of prompt tokens (prompt_time) and one decode
// step of batch sequences at context prompt (token_time). A prefill faster
// than a smaller batch's of the same prompt is a failed run and is left out.
func SplitwisePoints(path, hw string) ([]StepPoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := perf.ParseSplitwise(f, path)
	if err != nil {
		return nil, err
	}
	byKey := map[swKey]*swMean{}
	var keys []swKey
	for _, r := range rows {
		m, ok := splitwiseModels[r.Model]
		if !ok || r.Hardware != hw {
			continue
		}
		k := swKey{m, r.TP, r.BatchSize, r.PromptSize}
		a := byKey[k]
		if a == nil {
			a = &swMean{}
			byKey[k] = a
			keys = append(keys, k)
		}
		a.pre, a.dec, a.n = a.pre+r.PromptTimeMs, a.dec+r.TokenTimeMs, a.n+1
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	var out []StepPoint
	src := filepath.Base(path) + " " + hw
	for _, k := range keys {
		if failedRun(byKey, k) {
			continue
		}
		a := byKey[k]
		pre, dec := perf.ProfileSteps(k.batch, k.prompt)
		out = append(out, StepPoint{src + " prompt_time", k.model, k.tp, pre, a.pre / a.n},
			StepPoint{src + " token_time", k.model, k.tp, dec, a.dec / a.n})
	}
	return out, nil
}

// swKey identifies a Splitwise measurement; swMean sums its repeats.
type swKey struct {
	model             string
	tp, batch, prompt int
}

type swMean struct{ pre, dec, n float64 }

func (a swKey) less(b swKey) bool {
	if a.model != b.model {
		return a.model < b.model
	}
	if a.tp != b.tp {
		return a.tp < b.tp
	}
	if a.batch != b.batch {
		return a.batch < b.batch
	}
	return a.prompt < b.prompt
}

// failedRun reports whether some smaller batch of the same model, TP and
// prompt took longer to prefill than k: twice the work in less time is a
// failed run, not a measurement.
func failedRun(byKey map[swKey]*swMean, k swKey) bool {
	mine := byKey[k].pre / byKey[k].n
	for q, m := range byKey {
		if q.model == k.model && q.tp == k.tp && q.prompt == k.prompt && q.batch < k.batch && m.pre/m.n > mine {
			return true
		}
	}
	return false
}

// distServeModels maps DistServe's model names to catalog models.
var distServeModels = []struct{ profile, catalog string }{
	{"facebook/opt-13b", "opt-13b"}, {"facebook/opt-66b", "opt-66b"},
}

// distServeTPs are the TP degrees each DistServe A100 profile holds.
var distServeTPs = map[string][]int{"facebook/opt-13b": {1, 2, 4}, "facebook/opt-66b": {2, 4, 8}}

// DistServe pseudo-measurement grid: prefills of one prompt of each
// length, decodes of each batch at context distServeContext, all inside
// the range DistServe's profiler ran.
var (
	distServePrompts = []int{128, 256, 512, 1024, 2048}
	distServeBatches = []int{1, 4, 16, 32, 64, 128}
)

const distServeContext = 512

// DistServePoints evaluates a DistServe profiler file's fitted polynomials
// at a grid of prefills and decode batches, for OPT-13B and OPT-66B at the
// TP degrees the file profiles, as pseudo-measurements.
func DistServePoints(path string) ([]StepPoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []StepPoint
	for _, m := range distServeModels {
		for _, tp := range distServeTPs[m.profile] {
			c, err := perf.ParseDistServe(bytes.NewReader(data), path, m.profile, tp)
			if err != nil {
				return nil, err
			}
			out = append(out, polyGrid(perf.NewPolynomial(c), filepath.Base(path), m.catalog, tp)...)
		}
	}
	return out, nil
}

// polyGrid prices the grid with poly.
func polyGrid(poly *perf.Polynomial, src, model string, tp int) []StepPoint {
	var out []StepPoint
	for _, p := range distServePrompts {
		pre, _ := perf.ProfileSteps(1, p)
		out = append(out, StepPoint{src + " prefill", model, tp, pre, poly.StepMs(&pre)})
	}
	for _, b := range distServeBatches {
		_, dec := perf.ProfileSteps(b, distServeContext)
		out = append(out, StepPoint{src + " decode", model, tp, dec, poly.StepMs(&dec)})
	}
	return out
}

// stepResiduals returns (predicted − measured)/measured for each point,
// priced by the roofline of h.
func stepResiduals(dst []float64, pts []StepPoint, h *Hardware, models *llm.Catalog) ([]float64, error) {
	type key struct {
		model string
		tp    int
	}
	rl := map[key]*perf.Roofline{}
	for _, p := range pts {
		r := rl[key{p.Model, p.TP}]
		if r == nil {
			m, err := models.Model(p.Model)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Source, err)
			}
			r, err = perf.NewRoofline(perf.RooflineConfig{Model: m, Device: h.Accel, Layout: parallel.Tensor(p.TP), ScaleUp: h.Link, StepOverheadNs: -1})
			if err != nil {
				return nil, fmt.Errorf("%s: %s tp %d: %w", p.Source, p.Model, p.TP, err)
			}
			rl[key{p.Model, p.TP}] = r
		}
		dst = append(dst, (float64(r.StepNs(&p.Batch))/1e6-p.Ms)/p.Ms)
	}
	return dst, nil
}
