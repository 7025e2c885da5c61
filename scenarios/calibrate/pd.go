package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// PDFile is the measured P/D table's name in the calibration folder.
const PDFile = "measured-pd.csv"

// PDOutputLen is the output length of every measured P/D request (EOS ignored).
const PDOutputLen = 250

// PDRun is one measured closed-loop run of measured-pd.csv: one
// configuration at one concurrency. Times are s.
type PDRun struct {
	Config, Hardware, Placement, Mode string
	PrefillReplicas, PrefillTP        int
	DecodeReplicas, DecodeTP          int
	Concurrency, NumPrompts           int
	TTFTMean, TTFTMedian, TTFTP99     float64
	TPOTMean, TPOTMedian, TPOTP99     float64
	ITLMean                           float64
	OutputTPS, RequestRPS, DurationS  float64
}

// E2EMean is the mean end-to-end latency the measurement implies: every
// request produced PDOutputLen tokens, so mean(E2E) = mean(TTFT) +
// (PDOutputLen − 1)·mean(TPOT) exactly. The client did not record E2E.
func (r PDRun) E2EMean() float64 {
	return r.TTFTMean + float64(PDOutputLen-1)*r.TPOTMean
}

// PDConfig is one measured configuration: its scenario and its runs in
// increasing concurrency.
type PDConfig struct {
	Config   string
	Scenario string // path of calib-pd-gptoss-<config>.yaml
	Runs     []PDRun
}

// ReadPD reads dir's measured-pd.csv ('#' lines are comments) and groups
// its rows by configuration, in file order. A missing file is no error:
// it returns no configurations. Errors name the file, line and field.
func ReadPD(dir string) ([]PDConfig, error) {
	file := filepath.Join(dir, PDFile)
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	runs, err := parsePD(f, file)
	if err != nil {
		return nil, err
	}
	var out []PDConfig
	for _, r := range runs {
		if n := len(out); n > 0 && out[n-1].Config == r.Config {
			out[n-1].Runs = append(out[n-1].Runs, r)
			continue
		}
		path := filepath.Join(dir, "calib-pd-gptoss-"+r.Config+".yaml")
		out = append(out, PDConfig{Config: r.Config, Scenario: path, Runs: []PDRun{r}})
	}
	return out, nil
}

// parsePD reads the table's rows from rd; file names it in errors.
func parsePD(rd io.Reader, file string) ([]PDRun, error) {
	cr := csv.NewReader(rd)
	cr.Comment = '#'
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var out []PDRun
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		r, err := parsePDRow(rec, col)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		out = append(out, r)
	}
}

// parsePDRow parses one record by the header's columns.
func parsePDRow(rec []string, col map[string]int) (PDRun, error) {
	var r PDRun
	field := func(k string) (string, error) {
		i, ok := col[k]
		if !ok {
			return "", fmt.Errorf("field %s: no such column", k)
		}
		return rec[i], nil
	}
	strs := map[string]*string{"config": &r.Config, "hardware": &r.Hardware, "placement": &r.Placement, "mode": &r.Mode}
	ints := map[string]*int{"prefill_replicas": &r.PrefillReplicas, "prefill_tp": &r.PrefillTP,
		"decode_replicas": &r.DecodeReplicas, "decode_tp": &r.DecodeTP, "concurrency": &r.Concurrency, "num_prompts": &r.NumPrompts}
	floats := map[string]*float64{"ttft_mean_s": &r.TTFTMean, "ttft_median_s": &r.TTFTMedian, "ttft_p99_s": &r.TTFTP99,
		"tpot_mean_s": &r.TPOTMean, "tpot_median_s": &r.TPOTMedian, "tpot_p99_s": &r.TPOTP99, "itl_mean_s": &r.ITLMean,
		"output_throughput_tps": &r.OutputTPS, "request_throughput_rps": &r.RequestRPS, "duration_s": &r.DurationS}
	for _, k := range slices.Sorted(maps.Keys(strs)) {
		v, err := field(k)
		if err != nil {
			return r, err
		}
		if v == "" {
			return r, fmt.Errorf("field %s: empty", k)
		}
		*strs[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(ints)) {
		v, err := field(k)
		if err != nil {
			return r, err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return r, fmt.Errorf("field %s: want a whole number ≥ 0, got %q", k, v)
		}
		*ints[k] = n
	}
	for _, k := range slices.Sorted(maps.Keys(floats)) {
		v, err := field(k)
		if err != nil {
			return r, err
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) {
			return r, fmt.Errorf("field %s: want a positive number, got %q", k, v)
		}
		*floats[k] = x
	}
	return r, checkPDRow(r)
}

// checkPDRow holds a row to what the measurement was: 5c prompts, and a
// prefill pool of at least one replica.
func checkPDRow(r PDRun) error {
	switch {
	case r.Concurrency == 0 || r.NumPrompts != 5*r.Concurrency:
		return fmt.Errorf("field num_prompts: want 5 × concurrency (%d), got %d", 5*r.Concurrency, r.NumPrompts)
	case r.PrefillReplicas == 0 || r.PrefillTP == 0:
		return fmt.Errorf("field prefill_replicas: a run has at least one replica of TP ≥ 1")
	case r.Mode != "pd" && r.Mode != "colocated":
		return fmt.Errorf("field mode: want pd or colocated, got %q", r.Mode)
	}
	return nil
}

// PDTarget is one error figure over the measured P/D runs.
type PDTarget struct {
	Metric      string
	N           int     // runs it covers
	MAE, Signed float64 // mean |(sim − measured)/measured| and mean (sim − measured)/measured
	MAEMax      float64 // the target for MAE; 0 = none
}

// Met reports whether the figure is within its target (vacuously, with
// no runs or no target).
func (t PDTarget) Met() bool { return t.N == 0 || t.MAEMax == 0 || t.MAE <= t.MAEMax }

// pdMetric is one compared figure of a P/D row, and its target.
type pdMetric struct {
	name   string
	maeMax float64
	pick   func(r PDRow) (sim, meas float64)
}

// pdMetrics are the compared figures; the targets are issue 12's (TTFT
// within 15%, TPOT and throughput within 10%); ITL and E2E have none.
var pdMetrics = []pdMetric{
	{"TTFT mean", 0.15, func(r PDRow) (float64, float64) { return r.TTFTMean, r.Measured.TTFTMean }},
	{"TTFT median", 0.15, func(r PDRow) (float64, float64) { return r.TTFTMedian, r.Measured.TTFTMedian }},
	{"TTFT p99", 0.15, func(r PDRow) (float64, float64) { return r.TTFTP99, r.Measured.TTFTP99 }},
	{"TPOT mean", 0.10, func(r PDRow) (float64, float64) { return r.TPOTMean, r.Measured.TPOTMean }},
	{"ITL mean", 0, func(r PDRow) (float64, float64) { return r.ITLMean, r.Measured.ITLMean }},
	{"output throughput", 0.10, func(r PDRow) (float64, float64) { return r.OutputTPS, r.Measured.OutputTPS }},
	{"E2E mean (derived)", 0, func(r PDRow) (float64, float64) { return r.E2EMean, r.Measured.E2EMean() }},
}

// PDTargets returns the error figures over rows, one per compared metric.
func PDTargets(rows []PDRow) []PDTarget {
	var out []PDTarget
	for _, m := range pdMetrics {
		t := PDTarget{Metric: m.name, MAEMax: m.maeMax}
		var errs relErrors
		for _, r := range rows {
			errs.add(m.pick(r))
		}
		t.N, t.MAE, t.Signed = errs.mean()
		out = append(out, t)
	}
	return out
}

// pdMeanSquare is the fit's P/D block: the mean square of the relative
// errors of each run's TTFT mean, TPOT mean and output throughput at
// weight 1 and its TTFT p99 at weightP99. A run the simulation completed
// nothing of counts as a 100% error in each figure.
func pdMeanSquare(rows []PDRow) float64 {
	var sq weightedSquares
	for _, r := range rows {
		m := r.Measured
		sq.add(1, r.TTFTMean, m.TTFTMean)
		sq.add(1, r.TPOTMean, m.TPOTMean)
		sq.add(1, r.OutputTPS, m.OutputTPS)
		sq.add(weightP99, r.TTFTP99, m.TTFTP99)
	}
	return sq.mean()
}
