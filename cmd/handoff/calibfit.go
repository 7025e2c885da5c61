package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"handoff/hardware"
	"handoff/models/units"
	"handoff/results/outdir"
	"handoff/scenarios"
	"handoff/scenarios/calibrate"
)

// fitCalibration fits opts.accelerator, optionally leaves each model out,
// writes the catalog, and fills rep.
func fitCalibration(opts *calibrateOptions, sets []scenarios.Set, rep *calibReport) error {
	accel := opts.accelerator
	if accel == "" {
		accel = "h100-sxm"
	}
	src, err := calibrate.Sources(accel, opts.dir, opts.profiles)
	if err != nil {
		return err
	}
	date := opts.date
	if date == "" {
		date = src.Date
	}
	if opts.writeCatalog != "" && date == "" {
		return fmt.Errorf("--write-catalog: %s's data carry no date; give --date YYYY-MM-DD", src.Accelerator)
	}
	start, err := startHardware(opts.writeCatalog, src.Accelerator)
	if err != nil {
		return err
	}
	calibrate.ClearMoE(&start) // the first stage sees none of what the second fits
	stderr := opts.stderr
	if stderr == nil {
		stderr = io.Discard
	}
	p := calibrate.Problem{Experiments: src.Experiments, Steps: src.Steps, Start: start, Params: src.Params,
		Sets: sets, Workers: opts.jobs, Simulate: opts.simulator(opts.sets), MaxEvals: opts.maxEvals, Progress: stderr}
	t0 := time.Now()
	fit, err := calibrate.Fit(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "calibrate: fit of %s: %d evaluations in %.1f s, objective %.5g → %.5g\n",
		src.Accelerator, fit.Evals, time.Since(t0).Seconds(), fit.StartObjective, fit.Objective)
	rep.src, rep.fit, rep.results = &src, &fit, fit.Results
	if opts.loo {
		t0 = time.Now()
		if rep.heldOut, err = calibrate.LeaveOneOut(p, calibrate.Models(src.Experiments)); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "calibrate: leave-one-model-out: %.1f s\n", time.Since(t0).Seconds())
	}
	if opts.fitPD {
		if err := fitMoE(opts, sets, &p, rep); err != nil {
			return err
		}
	}
	if opts.writeCatalog == "" {
		return nil
	}
	return writeFittedCatalog(opts.writeCatalog, rep, provenance(rep, date))
}

// fitMoE is the fit's second stage (--fit-pd): the MoE terms
// (calibrate.MoEMeasured) fitted to the measured P/D runs on the
// accelerator, holding the first stage's values; the serving experiments
// and every P/D run are then simulated again at the result, which is what
// the catalog and the P/D scenarios' gateway.latency hold.
func fitMoE(opts *calibrateOptions, sets []scenarios.Set, first *calibrate.Problem, rep *calibReport) error {
	pd, err := pdOn(opts.dir, rep.src.Accelerator)
	if err != nil {
		return err
	}
	moe, err := calibrate.Lookup(calibrate.MoEMeasured())
	if err != nil {
		return err
	}
	p := calibrate.Problem{PD: pd, Start: rep.fit.Hardware, Params: moe, Sets: sets, Workers: opts.jobs,
		Simulate: first.Simulate, MaxEvals: opts.maxEvals, Progress: first.Progress}
	t0 := time.Now()
	fit, err := calibrate.Fit(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(first.Progress, "calibrate: MoE fit of %s: %d evaluations in %.1f s, objective %.5g → %.5g\n",
		rep.src.Accelerator, fit.Evals, time.Since(t0).Seconds(), fit.StartObjective, fit.Objective)
	rep.moe, rep.moeParams = &fit, moe
	all, err := calibrate.ReadPD(opts.dir) // every run, the other accelerators' too, at the fit
	if err != nil {
		return err
	}
	if rep.pd, err = calibrate.RunPD(all, calibrate.Options{Sets: sets, Hardware: &fit.Hardware, Workers: opts.jobs,
		Simulate: first.Simulate}); err != nil {
		return err
	}
	serving := fit.Hardware
	serving.Gateway = nil // the Ray Serve layers were in the P/D runs only
	rep.results, err = calibrate.Run(rep.src.Experiments, calibrate.Options{Sets: sets, Hardware: &serving,
		Workers: opts.jobs, Simulate: first.Simulate})
	return err
}

// pdOn returns dir's measured P/D configurations on accelerator; none is
// an error, since --fit-pd asked for them.
func pdOn(dir, accelerator string) ([]calibrate.PDConfig, error) {
	cfgs, err := calibrate.ReadPD(dir)
	if err != nil {
		return nil, err
	}
	var out []calibrate.PDConfig
	for _, c := range cfgs {
		if c.Runs[0].Hardware == accelerator {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--fit-pd: %s has no measured P/D runs on %s", dir, accelerator)
	}
	return out, nil
}

// startHardware is the accelerator and its scale-up link in file (the
// built-in catalog when file is "").
func startHardware(file, name string) (calibrate.Hardware, error) {
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
func provenance(rep *calibReport, date string) string {
	src, fit := rep.src, rep.fit
	s := fmt.Sprintf("fitted %s by handoff calibrate --fit (Nelder-Mead over %s) to %s; objective %.4g (start %.4g): serving RMS rel. error %.1f%%, step RMS %.1f%%",
		date, paramNames(src.Params), src.Data, fit.Objective, fit.StartObjective, 100*fit.ServingRMS, 100*fit.StepRMS)
	if m := rep.moe; m != nil {
		s += fmt.Sprintf("; then (--fit-pd) %s to the measured P/D runs of gpt-oss-120b on %s in %s: P/D RMS rel. error %.1f%% (start %.1f%%)",
			paramNames(rep.moeParams), src.Accelerator, calibrate.PDFile, 100*m.PDRMS, 100*math.Sqrt(m.StartObjective))
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
func writeFittedCatalog(file string, rep *calibReport, source string) error {
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
	if len(link) > 0 {
		if data, err = calibrate.RewriteEntry(data, file, "links", final.Link.Name, "", link); err != nil {
			return err
		}
	}
	return outdir.WriteFile(file, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// writeFit writes the fitted parameters and the fit's figures.
func writeFit(b *strings.Builder, rep *calibReport) {
	src, fit := rep.src, rep.fit
	fmt.Fprintf(b, "\n## Fit: %s\n\n", src.Accelerator)
	fmt.Fprintf(b, "Fitted to %s (%d step points). Objective (weighted mean square of relative errors) %.4g, from %.4g at the start, after %d evaluations; serving RMS %.1f%%, step RMS %.1f%%.\n",
		src.Data, len(src.Steps), fit.Objective, fit.StartObjective, fit.Evals, 100*fit.ServingRMS, 100*fit.StepRMS)
	if src.Borrowed != "" {
		fmt.Fprintf(b, "Borrowed (left as the catalog has them): %s.\n", src.Borrowed)
	}
	b.WriteString("\n| parameter | bounds | fitted | what it moves |\n|---|---|---|---|\n")
	accel, link := calibrate.CatalogFields(src.Params, &fit.Hardware)
	value := map[string]string{}
	for _, kv := range append(accel, link...) {
		value[kv.Key] = kv.Value
	}
	for _, p := range src.Params {
		v := value[p.Name]
		if !src.Writes(p.Name) {
			v += " (not written)"
		}
		fmt.Fprintf(b, "| %s | [%s, %s] | %s | %s |\n", p.Name, sig(p.Lo), sig(p.Hi), v, p.Doc)
	}
	writeMoEFit(b, rep)
}

// writeMoEFit writes the second stage's parameters (--fit-pd).
func writeMoEFit(b *strings.Builder, rep *calibReport) {
	m := rep.moe
	if m == nil {
		return
	}
	fmt.Fprintf(b, "\n## Fit: %s's MoE terms (--fit-pd)\n\n", rep.src.Accelerator)
	fmt.Fprintf(b, "Fitted to the measured P/D runs of gpt-oss-120b on %s in %s, holding the serving fit above: "+
		"P/D RMS relative error %.1f%%, from %.1f%% at the start, after %d evaluations. "+
		"The serving comparison at the top is simulated again with them.\n", rep.src.Accelerator, calibrate.PDFile,
		100*m.PDRMS, 100*math.Sqrt(m.StartObjective), m.Evals)
	b.WriteString("\n| parameter | bounds | fitted | what it moves |\n|---|---|---|---|\n")
	accel, _ := calibrate.CatalogFields(rep.moeParams, &m.Hardware)
	value := map[string]string{}
	for _, kv := range accel {
		value[kv.Key] = kv.Value
	}
	for _, p := range rep.moeParams {
		v, ok := value[p.Name]
		if !ok { // a scenario field
			v = units.Duration(int64(p.Get(&m.Hardware)+0.5)).String() + " (scenarios)"
		}
		fmt.Fprintf(b, "| %s | [%s, %s] | %s | %s |\n", p.Name, sig(p.Lo), sig(p.Hi), v, p.Doc)
	}
}

// writeHeldOut writes each held-out model's errors under the fit without it.
func writeHeldOut(b *strings.Builder, held []calibrate.HeldOut) {
	b.WriteString("\n## Leave one model out\n\nEach model's stages predicted by the fit to the other models' measurements alone (mean signed / mean absolute error over its non-overloaded stages).\n\n")
	b.WriteString("| held out | fit objective | TTFT mean | TTFT p99 | E2E mean | decode per token |\n|---|---|---|---|---|---|\n")
	for _, h := range held {
		fmt.Fprintf(b, "| %s | %.4g |", h.Model, h.Fit.Objective)
		for _, t := range calibrate.Targets(calibrate.Rows(h.Results))[:4] {
			fmt.Fprintf(b, " %+.1f%% / %.1f%% |", 100*t.Signed, 100*t.MAE)
		}
		b.WriteString("\n")
	}
}
