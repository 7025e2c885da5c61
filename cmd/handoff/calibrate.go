package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/scenarios"
	"handoff/scenarios/calibrate"
	"handoff/scenarios/experiment"
)

// calibrateOptions are the flags of `handoff calibrate`.
type calibrateOptions struct {
	dir      string   // folder with calib-*.yaml and the measured CSVs
	profiles string   // folder with splitwise/ and distserve/ step profiles
	out      string   // Markdown report; "" = stdout
	sets     []string // overrides applied to every calibration scenario
	jobs     int      // experiments simulated at once; 0 = all cores

	fit          bool   // fit the accelerator's factors first
	accelerator  string // the accelerator --fit fits
	writeCatalog string // catalog YAML file to write the fitted factors into
	date         string // provenance date; "" = the newest measurement's
	loo          bool   // leave-one-model-out after the fit
	maxEvals     int    // objective evaluations per fit; 0 = the library's default
	pd           bool   // also compare the measured P/D runs (measured-pd.csv)
	fitPD        bool   // with --fit: the P/D runs on the fitted accelerator join the objective

	progress bool // --progress: draw the progress line on stderr even when it is no terminal
	json     bool // --json: the comparison (and the fit) as JSON instead of Markdown

	simulate simulateFunc   // nil: calibrate.Simulate
	stderr   io.Writer      // progress lines; nil = discard
	line     *calibProgress // counts the simulations; nil = none
}

func newCalibrateCmd(stdout, stderr io.Writer) *cobra.Command {
	opts := &calibrateOptions{stderr: stderr}
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Run the calibration scenarios and compare them with the measured vLLM runs",
		Long: "Runs every calibration scenario (one per measured experiment) and prints, per load stage,\n" +
			"simulated vs measured TTFT, per-token decode time and E2E with the relative error, as Markdown.\n" +
			"With --fit, first fits the accelerator's efficiency and serving factors (least squares,\n" +
			"Nelder-Mead) and reports the comparison at the fit; --write-catalog writes them back.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runCalibrate(opts, stdout) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.dir, "dir", "scenarios/calibration", "calibration folder")
	f.StringVar(&opts.profiles, "profiles", "scenarios/profiles", "step-profile folder (splitwise/, distserve/) --fit uses")
	f.StringVarP(&opts.out, "out", "o", "", "write the Markdown report to `FILE` instead of stdout")
	f.StringArrayVar(&opts.sets, "set", nil, "override a field of every calibration scenario, `path=value`")
	f.IntVar(&opts.jobs, "jobs", 0, "experiments simulated at once (`N`; 0 = one per core)")
	f.BoolVar(&opts.fit, "fit", false, "fit the accelerator's factors to the measurements first")
	f.StringVar(&opts.accelerator, "accelerator", "h100-sxm", "the accelerator --fit fits (h100-sxm, a100-80gb)")
	f.StringVar(&opts.writeCatalog, "write-catalog", "", "write the fitted factors into catalog `FILE` (with --fit)")
	f.StringVar(&opts.date, "date", "", "date (YYYY-MM-DD) the catalog's provenance names; default: the newest measurement's")
	f.BoolVar(&opts.loo, "loo", false, "with --fit: refit without each model and predict it")
	f.IntVar(&opts.maxEvals, "max-evals", 0, "objective evaluations per fit at most (`N`; 0 = 100 per parameter)")
	f.BoolVar(&opts.pd, "pd", true, "also compare the measured P/D runs of gpt-oss-120b ("+calibrate.PDFile+"), when the folder has them")
	f.BoolVar(&opts.fitPD, "fit-pd", false, "with --fit: then fit the MoE terms to the P/D runs on the fitted accelerator (implies --pd)")
	f.BoolVar(&opts.progress, "progress", false,
		"draw the progress line (simulations run) on stderr even when it is not a terminal")
	f.BoolVar(&opts.json, "json", false, "write every stage and P/D run against its measurement (and the fit's values) "+
		"as JSON instead of the Markdown report")
	return cmd
}

// check rejects flag combinations that cannot work, before anything runs.
func (o *calibrateOptions) check() error {
	switch {
	case !o.fit && (o.writeCatalog != "" || o.loo || o.fitPD || o.date != "" || o.accelerator != "" && o.accelerator != "h100-sxm"):
		return fmt.Errorf("--write-catalog, --loo, --fit-pd, --date and --accelerator need --fit")
	case o.date != "" && !isDate(o.date):
		return fmt.Errorf("--date %q: want YYYY-MM-DD", o.date)
	case o.jobs < 0 || o.maxEvals < 0:
		return fmt.Errorf("--jobs and --max-evals must not be negative")
	case o.out != "":
		return outdir.CheckFile("-o", o.out)
	}
	return nil
}

func isDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// runCalibrate compares (after fitting, with --fit) and writes the report.
func runCalibrate(opts *calibrateOptions, stdout io.Writer) error {
	if err := opts.check(); err != nil {
		return err
	}
	sets, err := experiment.ParseSets(opts.sets)
	if err != nil {
		return err
	}
	if line := newProgress(opts.stderr, opts.progress, -1, "calibrate"); line != nil {
		opts.line = &calibProgress{line: line}
		opts.stderr = opts.line // the fit's status lines print above the line
		defer line.finish()
	}
	rep := &calibReport{}
	if opts.fit {
		if err := fitCalibration(opts, sets, rep); err != nil {
			return err
		}
	} else {
		exps, err := calibrate.ReadMeasured(opts.dir)
		if err != nil {
			return err
		}
		rep.results, err = calibrate.Run(exps, calibrate.Options{Sets: sets, Workers: opts.jobs, Simulate: opts.simulator(opts.sets)})
		if err != nil {
			return err
		}
	}
	if err := comparePD(opts, sets, rep); err != nil {
		return err
	}
	write := func(w io.Writer) error { return writeCalibration(w, rep) }
	if opts.json {
		write = func(w io.Writer) error { return writeCalibrationJSON(w, rep) }
	}
	if opts.out != "" {
		err = outdir.WriteFile(opts.out, write)
	} else {
		err = write(stdout)
	}
	if err != nil {
		return err
	}
	return incomplete(rep.unserved())
}

// simulator adapts the command's simulate (for tests) to the library's,
// turning a panic into an error that says how to replay the run.
func (o *calibrateOptions) simulator(rawSets []string) calibrate.SimulateFunc {
	return func(l *scenarios.Loaded) (recs []results.Record, err error) {
		rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: rawSets}
		defer experiment.RecoverRun(&err, &rp)
		defer o.line.simulated()
		if o.simulate == nil {
			return calibrate.Simulate(l)
		}
		_, res, err := o.simulate(l)
		if err != nil {
			return nil, err
		}
		return res.Records, nil
	}
}

// calibReport is what the report shows.
type calibReport struct {
	results   []calibrate.Result   // the comparison (at the fit, with --fit)
	src       *calibrate.Source    // with --fit: what was fitted to
	fit       *calibrate.Fitted    // with --fit
	heldOut   []calibrate.HeldOut  // with --loo
	pd        []calibrate.PDResult // with --pd: the measured P/D runs (at the fit, with --fit)
	moe       *calibrate.Fitted    // with --fit-pd: the second stage, the MoE terms
	moeParams []calibrate.Param    // what it fitted
}

// unserved returns the first experiment's (then P/D run's) unserved-requests error.
func (r *calibReport) unserved() error {
	for _, res := range r.results {
		if res.Unserved != nil {
			return res.Unserved
		}
	}
	for _, res := range r.pd {
		if res.Unserved != nil {
			return res.Unserved
		}
	}
	return nil
}

// comparePD fills rep.pd with --pd or --fit-pd: the fit's P/D results when
// it fitted to them, else the runs simulated at the fit (or the catalog).
func comparePD(opts *calibrateOptions, sets []scenarios.Set, rep *calibReport) error {
	if !opts.pd && !opts.fitPD {
		return nil
	}
	if rep.moe != nil {
		return nil // fitMoE simulated them at the fit
	}
	cfgs, err := calibrate.ReadPD(opts.dir)
	if err != nil {
		return err
	}
	if len(cfgs) == 0 {
		return nil // a folder without P/D runs
	}
	o := calibrate.Options{Sets: sets, Workers: opts.jobs, Simulate: opts.simulator(opts.sets)}
	if rep.fit != nil {
		o.Hardware = &rep.fit.Hardware
	}
	rep.pd, err = calibrate.RunPD(cfgs, o)
	return err
}

// writeCalibration renders the comparison as Markdown tables.
func writeCalibration(w io.Writer, rep *calibReport) error {
	var b strings.Builder
	b.WriteString(calibrationHeader)
	rows := calibrate.Rows(rep.results)
	writeStageTable(&b, rows)
	b.WriteString("\n## Targets\n\n")
	writeTargets(&b, calibrate.Targets(rows))
	if rep.fit != nil {
		writeFit(&b, rep)
	}
	if rep.heldOut != nil {
		writeHeldOut(&b, rep.heldOut)
	}
	if rep.pd != nil {
		writePD(&b, calibrate.PDRows(rep.pd))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeStageTable writes one row per stage, and the median errors.
func writeStageTable(b *strings.Builder, rows []calibrate.Row) {
	b.WriteString("| experiment | stage | rate | sim done | measured ok / fail | TTFT mean sim / meas (err) | TTFT p99 sim / meas (err) | decode s/token sim / meas (err) | E2E mean sim / meas (err) | E2E p99 sim / meas (err) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	var errs [4][]float64
	for _, r := range rows {
		m := r.Stage
		over := ""
		if m.Overloaded() {
			over = " (overloaded)"
		}
		fmt.Fprintf(b, "| %s-tp%d-%s | %d%s | %g/s | %d/%d | %d / %d | %s | %s | %s | %s | %s |\n",
			m.Model, m.TP, m.Profile, m.Index, over, m.Rate, r.Completed, r.Total, m.NSuccess, m.NFail,
			cmp(r.TTFTMean, m.TTFTMean, &errs[0]), cmp(r.TTFTP99, m.TTFTP99, nil),
			cmp(r.PerToken, m.PerToken(), &errs[1]), cmp(r.E2EMean, m.E2EMean, &errs[2]),
			cmp(r.E2EP99, m.E2EP99, &errs[3]))
	}
	fmt.Fprintf(b, "\nMedian absolute error over all stages: TTFT mean %s, decode time per token %s, E2E mean %s, E2E p99 %s.\n",
		medianPct(errs[0]), medianPct(errs[1]), medianPct(errs[2]), medianPct(errs[3]))
}

// writePD writes the measured P/D section: one row per run, then the
// error figures against their targets, each with its worst run.
func writePD(b *strings.Builder, rows []calibrate.PDRow) {
	b.WriteString(pdHeader)
	b.WriteString("| config | c | sim done | TTFT mean | TTFT median | TTFT p99 | TPOT mean | ITL mean | output tok/s | E2E mean (derived) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		m := r.Measured
		fmt.Fprintf(b, "| %s | %d | %d/%d | %s | %s | %s | %s | %s | %s | %s |\n", m.Config, m.Concurrency, r.Completed, r.Total,
			cmp(r.TTFTMean, m.TTFTMean, nil), cmp(r.TTFTMedian, m.TTFTMedian, nil), cmp(r.TTFTP99, m.TTFTP99, nil),
			cmp(r.TPOTMean, m.TPOTMean, nil), cmp(r.ITLMean, m.ITLMean, nil), cmp(r.OutputTPS, m.OutputTPS, nil),
			cmp(r.E2EMean, m.E2EMean(), nil))
	}
	b.WriteString("\n| metric | runs | mean abs. error (target) | mean signed error | met |\n|---|---|---|---|---|\n")
	for _, t := range calibrate.PDTargets(rows) {
		target, met := "", "yes"
		if t.MAEMax > 0 {
			target = fmt.Sprintf(" (≤ %.0f%%)", 100*t.MAEMax)
		} else {
			met = "no target"
		}
		if !t.Met() {
			met = "no"
		}
		fmt.Fprintf(b, "| %s | %d | %.1f%%%s | %+.1f%% | %s |\n", t.Metric, t.N, 100*t.MAE, target, 100*t.Signed, met)
	}
}

const pdHeader = `
## Measured P/D runs (gpt-oss-120b, vLLM 0.11 + NIXL, H100 and H200)

Closed-loop runs by Anyscale ("Ray Serve LLM Performance Benchmarks", prefill_decode/; transcribed in
` + "`scenarios/calibration/measured-pd.csv`" + `, whose header gives the source and what was left out): c
requests in flight, 5c requests of 5000 random prompt tokens and exactly 250 output tokens. Each
scenario ` + "`calib-pd-gptoss-<config>.yaml`" + ` runs at each c. Cells are sim / measured (err), times in s;
TPOT is per request (E2E − TTFT)/249, ITL the pooled token gaps, output tok/s over first send to last
completion, and E2E mean TTFT mean + 249 · TPOT mean on both sides (the client recorded no E2E).

`

// writeTargets writes the error figures against their targets.
func writeTargets(b *strings.Builder, ts []calibrate.Target) {
	b.WriteString("| stages | metric | stages counted | mean abs. error (target) | mean signed error (target) | met |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, t := range ts {
		signed := fmt.Sprintf("%+.1f%%", 100*t.Signed)
		if t.SignedMax > 0 {
			signed += fmt.Sprintf(" (±%.0f%%)", 100*t.SignedMax)
		}
		met := "yes"
		if !t.Met() {
			met = "no"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %.1f%% (≤ %.0f%%) | %s | %s |\n", t.Stages, t.Metric, t.N, 100*t.MAE, 100*t.MAEMax, signed, met)
	}
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

Generated by <!-- doc:external reason="a refit with leave-one-out takes about twenty-five minutes and rewrites the catalog; TestCalibrationDocIsCurrent holds this file to the catalog" -->` + "`go run ./cmd/handoff calibrate --fit --fit-pd --loo --write-catalog hardware/catalog.yaml -o docs/CALIBRATION.md`" + `
(about twenty-five minutes on two cores); do not edit by hand. ` + "`go run ./cmd/handoff calibrate`" + ` reprints the
comparison and targets below from the catalog's values in a few seconds, and a test holds this file to it.

Each row is one load stage of one measured experiment (vLLM V1, H100 SXM, inference-perf
shared_prefix load; ` + "`scenarios/calibration/`" + ` holds the scenarios and the measured CSVs). The
simulation runs the scenario with the catalog's factors and summarises the requests that arrived
during the stage.

- **sim done**: requests the simulation completed / requests that arrived in the stage. Like the
  measured client (inference-perf, whose aiohttp session gives up after 300 s), the simulated
  client abandons a request after 300 s and the server frees its KV; **measured ok / fail** are
  the client's successes and failures. Latency figures on both sides cover completed requests.
- **decode s/token**: (E2E − TTFT)/(output tokens − 1). The measured value is computed the same
  way from the stage means, with the profile's output length; the CSV's own ` + "`tpot`" + ` column is
  per streamed chunk (about two per token) and is not used.
- **err**: (simulated − measured)/measured.
- **(overloaded)**: the measured client failed more than 10% of the stage's requests. Those
  stages are left out of the fit's residuals and of the non-overloaded targets; the targets
  table judges them by completed count and E2E mean of completed requests instead.
- The Fit section gives the factors the fit (` + "`--fit`" + `) found (Nelder-Mead from fixed starting
  values, within the bounds shown) and wrote into the catalog; the comparison above is at them.

`

// calibProgress counts calibrate's simulations on a progress line, and
// prints the status lines written to it above the line. Safe for the
// experiments' goroutines; a nil *calibProgress counts nothing.
type calibProgress struct {
	mu   sync.Mutex
	line *progress
	sims int64
}

// simulated counts one more simulation and redraws.
func (c *calibProgress) simulated() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sims++
	c.line.update(c.sims, fmt.Sprintf("%d simulations run", c.sims))
}

// Write prints b above the line.
func (c *calibProgress) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line.above(b)
	return len(b), nil
}
