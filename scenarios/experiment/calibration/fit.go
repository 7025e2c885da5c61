package calibration

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"handoff/hardware"
	"handoff/results/outdir"
	"handoff/scenarios/calibrate"
)

// fit fits the accelerator, optionally leaves each model out and fits the
// MoE terms, writes the catalog, and fills rep.
func (r *runner) fit(rep *Report) error {
	accel := r.opts.Accelerator
	if accel == "" {
		accel = DefaultAccelerator
	}
	src, err := calibrate.Sources(accel, r.opts.Dir, r.opts.Profiles)
	if err != nil {
		return err
	}
	date := r.opts.Date
	if date == "" {
		date = src.Date
	}
	if r.opts.WriteCatalog != "" && date == "" {
		return fmt.Errorf("--write-catalog: %s's data carry no date; give --date YYYY-MM-DD", src.Accelerator)
	}
	start, err := StartHardware(r.opts.WriteCatalog, src.Accelerator)
	if err != nil {
		return err
	}
	calibrate.ClearMoE(&start) // the first stage sees none of what the second fits
	p := calibrate.Problem{Experiments: src.Experiments, Steps: src.Steps, Start: start, Params: src.Params,
		Sets: r.sets, Workers: r.opts.Workers, Simulate: r.simulate, MaxEvals: r.opts.MaxEvals, Progress: r.log}
	t0 := time.Now()
	fit, err := calibrate.Fit(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.log, "calibrate: fit of %s: %d evaluations in %.1f s, objective %.5g → %.5g\n",
		src.Accelerator, fit.Evals, time.Since(t0).Seconds(), fit.StartObjective, fit.Objective)
	rep.src, rep.fit, rep.results, rep.date = &src, &fit, fit.Results, date
	if r.opts.LeaveOneOut {
		t0 = time.Now()
		if rep.heldOut, err = calibrate.LeaveOneOut(p, calibrate.Models(src.Experiments)); err != nil {
			return err
		}
		fmt.Fprintf(r.log, "calibrate: leave-one-model-out: %.1f s\n", time.Since(t0).Seconds())
	}
	if r.opts.FitPD {
		if err := r.fitMoE(rep); err != nil {
			return err
		}
	}
	if r.opts.WriteCatalog == "" {
		return nil
	}
	return writeFittedCatalog(r.opts.WriteCatalog, rep, provenance(rep, date))
}

// StartHardware is the accelerator name and its scale-up link in the
// catalog file (the built-in catalog when file is ""): where a fit starts.
func StartHardware(file, name string) (calibrate.Hardware, error) {
	cat := hardware.Default()
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return calibrate.Hardware{}, fmt.Errorf("--write-catalog: %w", err)
		}
		if cat, err = hardware.Parse(data, file); err != nil {
			return calibrate.Hardware{}, err
		}
	}
	a, err := cat.Accelerator(name)
	if err != nil {
		return calibrate.Hardware{}, err
	}
	h := calibrate.Hardware{Accel: a}
	if a.ScaleUpLink != "" {
		if h.Link, err = cat.Link(a.ScaleUpLink); err != nil {
			return calibrate.Hardware{}, err
		}
	}
	return h, nil
}

// provenance is the efficiency_source a fit writes.
func provenance(rep *Report, date string) string {
	src, fit := rep.src, rep.fit
	s := fmt.Sprintf("fitted %s by handoff calibrate --fit (Nelder-Mead over %s) to %s; objective %.4g (start %.4g): serving RMS rel. error %.1f%%, step RMS %.1f%%",
		date, paramNames(src.Params), src.Data, fit.Objective, fit.StartObjective, 100*fit.ServingRMS, 100*fit.StepRMS)
	if m := rep.moe; m != nil {
		s += "; then (--fit-pd) " + pdProvenance(rep, m, src.Accelerator)
	}
	if src.Borrowed != "" {
		s += "; borrowed: " + src.Borrowed
	}
	return s
}

func paramNames(ps []calibrate.Param) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// writeFittedCatalog rewrites the fitted fields of the accelerator (and of
// its scale-up link) in file, in place.
func writeFittedCatalog(file string, rep *Report, source string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("--write-catalog: %w", err)
	}
	src, final := rep.src, &rep.fit.Hardware
	var written []calibrate.Param
	for _, p := range src.Params {
		if src.Writes(p.Name) {
			written = append(written, p)
		}
	}
	if rep.moe != nil {
		written, final = append(written, rep.moeParams...), &rep.moe.Hardware
	}
	accel, link := calibrate.CatalogFields(written, final)
	accel = append(accel, calibrate.KeyValue{Key: "efficiency_source", Value: calibrate.Quote(source)})
	if data, err = calibrate.RewriteEntry(data, file, "accelerators", src.Accelerator, "mbu", accel); err != nil {
		return err
	}
	if data, err = rewriteBorrowers(data, file, rep); err != nil {
		return err
	}
	if len(link) > 0 {
		if data, err = calibrate.RewriteEntry(data, file, "links", final.Link.Name, "", link); err != nil {
			return err
		}
	}
	return outdir.WriteFile(file, func(w io.Writer) error { _, err := w.Write(data); return err })
}
