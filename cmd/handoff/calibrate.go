package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"handoff/results/outdir"
	"handoff/scenarios/calibrate"
	"handoff/scenarios/experiment/calibration"
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

	simulate simulateFunc // nil: calibrate.Simulate
	stderr   io.Writer    // the progress line and the fit's status lines; nil = discard
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
	f.BoolVar(&opts.loo, "loo", false, "with --fit: refit without each model and predict it (with --fit-pd, also each P/D configuration)")
	f.IntVar(&opts.maxEvals, "max-evals", 0, "objective evaluations per fit at most (`N`; 0 = 100 per parameter)")
	f.BoolVar(&opts.pd, "pd", true, "also compare the measured P/D runs of gpt-oss-120b ("+calibrate.PDFile+"), when the folder has them")
	f.BoolVar(&opts.fitPD, "fit-pd", false, "with --fit: then fit the MoE terms to the P/D runs on the fitted accelerator, and on each accelerator borrowing its factors to its own runs (implies --pd)")
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

// runCalibrate compares (after fitting, with --fit): calibration.Calibrate,
// the progress line on stderr; then writes the report.
func runCalibrate(opts *calibrateOptions, stdout io.Writer) error {
	if err := opts.check(); err != nil {
		return err
	}
	line := newProgress(opts.stderr, opts.progress, -1, "calibrate")
	log := opts.stderr
	if line != nil {
		log = aboveLine{line} // the fit's status lines print above the line
	}
	rep, err := calibration.Calibrate(calibration.Options{Dir: opts.dir, Profiles: opts.profiles, Sets: opts.sets,
		Workers: opts.jobs, Fit: opts.fit, Accelerator: opts.accelerator, WriteCatalog: opts.writeCatalog,
		Date: opts.date, LeaveOneOut: opts.loo, MaxEvals: opts.maxEvals, PD: opts.pd, FitPD: opts.fitPD,
		Simulate: opts.simulate, Log: log,
		Progress: func(sims int) { line.update(int64(sims), fmt.Sprintf("%d simulations run", sims)) }})
	line.finish()
	if err != nil {
		return err
	}
	write := rep.WriteMarkdown
	if opts.json {
		write = rep.WriteJSON
	}
	if opts.out != "" {
		err = outdir.WriteFile(opts.out, write)
	} else {
		err = write(stdout)
	}
	if err != nil {
		return err
	}
	return incomplete(rep.Unserved())
}

// aboveLine writes status lines above a progress line. Calibrate never
// writes one at once with a progress update.
type aboveLine struct{ line *progress }

func (a aboveLine) Write(b []byte) (int, error) {
	a.line.above(b)
	return len(b), nil
}
