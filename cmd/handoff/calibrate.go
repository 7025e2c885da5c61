package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"handoff/results"
)

// calibrateOptions are the flags of `handoff calibrate`.
type calibrateOptions struct {
	dir  string   // folder with calib-*.yaml and the measured CSVs
	out  string   // Markdown report; "" = stdout
	sets []string // overrides applied to every calibration scenario

	simulate simulateFunc // nil: simulate
}

func newCalibrateCmd(stdout io.Writer) *cobra.Command {
	opts := &calibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Run the calibration scenarios and compare them with the measured vLLM runs",
		Long: "Runs every calibration scenario (one per measured experiment) and prints, per load stage,\n" +
			"simulated vs measured TTFT, per-token decode time and E2E with the relative error, as Markdown.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return calibrate(opts, stdout) },
	}
	cmd.Flags().StringVar(&opts.dir, "dir", "scenarios/calibration", "calibration folder")
	cmd.Flags().StringVarP(&opts.out, "out", "o", "", "write the Markdown report to `FILE` instead of stdout")
	cmd.Flags().StringArrayVar(&opts.sets, "set", nil, "override a field of every calibration scenario, `path=value`")
	return cmd
}

// measuredStage is one row of measured-stages.csv joined with its
// experiment's profile.
type measuredStage struct {
	experiment, model, profile string
	tp, stage, outputLen       int
	rate, durationS            float64
	nSuccess, nFail            int
	ttftMean, ttftP99          float64
	e2eMean, e2eP99            float64
	tpotChunk                  float64
}

// perToken is the decode time per output token implied by the means:
// (E2E − TTFT)/(output − 1). The measured tpot column is per streamed chunk.
func (m measuredStage) perToken() float64 {
	return (m.e2eMean - m.ttftMean) / float64(m.outputLen-1)
}

func calibrate(opts *calibrateOptions, stdout io.Writer) error {
	if opts.out != "" {
		if err := checkOutFile("-o", opts.out); err != nil {
			return err
		}
	}
	stages, err := readMeasured(opts.dir)
	if err != nil {
		return err
	}
	var rows []calibRow
	var dropped error // the first experiment's that left requests unserved (dropped or failed)
	for _, exp := range experiments(stages) {
		r, unserved, err := calibrateExperiment(opts, exp)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
		if dropped == nil {
			dropped = unserved
		}
	}
	if opts.out != "" {
		err = writeOutFile(opts.out, func(w io.Writer) error { return writeCalibration(w, rows) })
	} else {
		err = writeCalibration(stdout, rows)
	}
	if err != nil {
		return err
	}
	return incomplete(dropped)
}

// experiments groups stages by experiment, in file order.
func experiments(stages []measuredStage) [][]measuredStage {
	var out [][]measuredStage
	for _, s := range stages {
		if n := len(out); n > 0 && out[n-1][0].experiment == s.experiment {
			out[n-1] = append(out[n-1], s)
			continue
		}
		out = append(out, []measuredStage{s})
	}
	return out
}

// calibRow is one stage, simulated and measured.
type calibRow struct {
	m                         measuredStage
	completed, total          int
	ttftMean, ttftP99         float64
	perToken, e2eMean, e2eP99 float64
}

// calibrateExperiment runs one experiment's scenario and returns its stages'
// rows, and the requests it could not serve (see unserved). A panic
// becomes an error that says how to replay the run.
func calibrateExperiment(opts *calibrateOptions, exp []measuredStage) (rows []calibRow, dropped, err error) {
	first := exp[0]
	path := filepath.Join(opts.dir, fmt.Sprintf("calib-%s-tp%d-%s.yaml", first.model, first.tp, first.profile))
	l, err := loadScenario(path, opts.sets, 0)
	if err != nil {
		return nil, nil, err
	}
	rp := replay{file: l.File, seed: l.Seed, sets: opts.sets}
	defer recoverRun(&err, &rp)
	_, res, err := opts.simulate.orDefault()(l)
	if err != nil {
		return nil, nil, err
	}
	startNs := int64(0)
	for _, m := range exp {
		endNs := startNs + int64(m.durationS*1e9)
		rows = append(rows, stageRow(m, res.Records, startNs, endNs))
		startNs = endNs
	}
	return rows, unserved(res.Records, workloadName(l)), nil
}

// stageRow summarises the records that arrived during one stage.
func stageRow(m measuredStage, recs []results.Record, startNs, endNs int64) calibRow {
	row := calibRow{m: m}
	var ttft, e2e, tok []float64
	for i := range recs {
		r := &recs[i]
		if r.ArrivalNs < startNs || r.ArrivalNs >= endNs {
			continue
		}
		row.total++
		if r.Status != results.Completed {
			continue
		}
		row.completed++
		ttft = append(ttft, float64(r.FirstTokenNs-r.ArrivalNs)/1e9)
		e2e = append(e2e, float64(r.FinishNs-r.ArrivalNs)/1e9)
		if r.OutputTokens > 1 {
			tok = append(tok, float64(r.FinishNs-r.FirstTokenNs)/1e9/float64(r.OutputTokens-1))
		}
	}
	row.ttftMean, row.ttftP99 = meanP99(ttft)
	row.e2eMean, row.e2eP99 = meanP99(e2e)
	row.perToken, _ = meanP99(tok)
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

// writeCalibration renders the comparison as Markdown tables.
func writeCalibration(w io.Writer, rows []calibRow) error {
	var b strings.Builder
	b.WriteString(calibrationHeader)
	b.WriteString("| experiment | stage | rate | sim done | measured ok / fail | TTFT mean sim / meas (err) | TTFT p99 sim / meas (err) | decode s/token sim / meas (err) | E2E mean sim / meas (err) | E2E p99 sim / meas (err) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	var errs [4][]float64
	for _, r := range rows {
		m := r.m
		fmt.Fprintf(&b, "| %s-tp%d-%s | %d | %g/s | %d/%d | %d / %d | %s | %s | %s | %s | %s |\n",
			m.model, m.tp, m.profile, m.stage, m.rate, r.completed, r.total, m.nSuccess, m.nFail,
			cmp(r.ttftMean, m.ttftMean, &errs[0]), cmp(r.ttftP99, m.ttftP99, nil),
			cmp(r.perToken, m.perToken(), &errs[1]), cmp(r.e2eMean, m.e2eMean, &errs[2]),
			cmp(r.e2eP99, m.e2eP99, &errs[3]))
	}
	fmt.Fprintf(&b, "\nMedian absolute error over all stages: TTFT mean %s, decode time per token %s, E2E mean %s, E2E p99 %s.\n",
		medianPct(errs[0]), medianPct(errs[1]), medianPct(errs[2]), medianPct(errs[3]))
	_, err := io.WriteString(w, b.String())
	return err
}

// cmp renders "sim / measured (±err%)" and records |err| in acc.
func cmp(sim, meas float64, acc *[]float64) string {
	e := (sim - meas) / meas
	if acc != nil {
		*acc = append(*acc, math.Abs(e))
	}
	return fmt.Sprintf("%s / %s (%+.0f%%)", sig(sim), sig(meas), 100*e)
}

func sig(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

func medianPct(xs []float64) string {
	if len(xs) == 0 {
		return "n/a"
	}
	slices.Sort(xs)
	return fmt.Sprintf("%.0f%%", 100*results.Quantile(xs, 0.5))
}

const calibrationHeader = `# Calibration: simulated vs measured vLLM on H100

Generated by ` + "`go run ./cmd/handoff calibrate -o docs/CALIBRATION.md`" + `; do not edit by hand.

Each row is one load stage of one measured experiment (vLLM V1, H100 SXM, inference-perf
shared_prefix load; ` + "`scenarios/calibration/`" + ` holds the scenarios and the measured CSVs). The
simulation runs the scenario with the catalog's default efficiency factors and summarises the
requests that arrived during the stage.

- **sim done**: requests the simulation completed / requests that arrived in the stage. The
  simulator completes every request however late; the measured client gave up on some
  (**fail**), and its latency figures cover only the requests that succeeded. In overloaded
  stages (the reasoning runs) the two are therefore not like for like.
- **decode s/token**: (E2E − TTFT)/(output tokens − 1). The measured value is computed the same
  way from the stage means, with the profile's output length; the CSV's own ` + "`tpot`" + ` column is
  per streamed chunk (about two per token) and is not used.
- **err**: (simulated − measured)/measured.

`

// readMeasured reads the experiments and stages CSVs of the calibration set.
func readMeasured(dir string) ([]measuredStage, error) {
	exps, err := readCSV(filepath.Join(dir, "measured-experiments.csv"))
	if err != nil {
		return nil, err
	}
	profiles := map[string]map[string]string{}
	for _, e := range exps {
		profiles[e["experiment"]] = e
	}
	rows, err := readCSV(filepath.Join(dir, "measured-stages.csv"))
	if err != nil {
		return nil, err
	}
	var out []measuredStage
	for i, r := range rows {
		s, err := parseStage(r, profiles[r["experiment"]])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", filepath.Join(dir, "measured-stages.csv"), i+2, err)
		}
		out = append(out, s)
	}
	return out, nil
}

var modelNames = map[string]string{
	"meta-llama/Llama-2-7b-hf":    "llama-2-7b",
	"meta-llama/Llama-2-70b-hf":   "llama-2-70b",
	"mistralai/Mixtral-8x7B-v0.1": "mixtral-8x7b",
}

func parseStage(r, exp map[string]string) (measuredStage, error) {
	if exp == nil {
		return measuredStage{}, fmt.Errorf("experiment %q not in measured-experiments.csv", r["experiment"])
	}
	id := r["experiment"]
	s := measuredStage{experiment: id, model: modelNames[r["model"]], profile: id[strings.LastIndex(id, "-")+1:]}
	ints := map[string]*int{"tp": &s.tp, "stage": &s.stage, "n_success": &s.nSuccess, "n_fail": &s.nFail}
	floats := map[string]*float64{"rate_rps": &s.rate, "duration_s": &s.durationS, "ttft_mean_s": &s.ttftMean,
		"ttft_p99_s": &s.ttftP99, "e2e_mean_s": &s.e2eMean, "e2e_p99_s": &s.e2eP99, "tpot_mean_s": &s.tpotChunk}
	for k, p := range ints {
		v, err := strconv.Atoi(r[k])
		if err != nil {
			return s, fmt.Errorf("%s: %v", k, err)
		}
		*p = v
	}
	for k, p := range floats {
		v, err := strconv.ParseFloat(r[k], 64)
		if err != nil {
			return s, fmt.Errorf("%s: %v", k, err)
		}
		*p = v
	}
	out, err := strconv.Atoi(exp["output_len"])
	if err != nil || s.model == "" {
		return s, fmt.Errorf("experiment %s: bad output_len or unknown model %q", id, r["model"])
	}
	s.outputLen = out
	return s, nil
}

// readCSV reads a CSV file with a header into maps keyed by column.
func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out, nil
}
