package calibration

import (
	"fmt"
	"math"
	"slices"
	"time"

	"handoff/hardware"
	"handoff/scenarios/calibrate"
)

// pdStage is one accelerator's second stage (FitPD): its MoE terms fitted
// to its measured P/D runs, and with LeaveOneOut each configuration
// predicted by a refit without it.
type pdStage struct {
	accel   string
	fit     calibrate.Fitted
	heldOut []calibrate.HeldOutConfig
}

// locoEvalsPerParam bounds each leave-one-configuration-out refit, which
// starts from the whole data's fit: a short walk, not a fresh search.
const locoEvalsPerParam = 20

// fitMoE is the fit's second stage (FitPD): the MoE terms
// (calibrate.MoEMeasured) fitted to the measured P/D runs on the fitted
// accelerator, holding the first stage's values; then, for every other
// accelerator with runs of its own that borrows the fitted one's factors
// (H200 from H100), the same terms fitted to its runs alone — its own
// where the data allows. The serving experiments and every P/D run are
// then simulated again at the result, which is what the catalog holds.
func (r *runner) fitMoE(rep *Report) error {
	all, err := calibrate.ReadPD(r.opts.Dir)
	if err != nil {
		return err
	}
	if rep.moeParams, err = calibrate.Lookup(calibrate.MoEMeasured()); err != nil {
		return err
	}
	own := configsOn(all, rep.src.Accelerator)
	if len(own) == 0 {
		return fmt.Errorf("--fit-pd: %s has no measured P/D runs on %s", r.opts.Dir, rep.src.Accelerator)
	}
	first, err := r.fitPDStage(rep, rep.src.Accelerator, rep.fit.Hardware, own, nil)
	if err != nil {
		return err
	}
	rep.pdStages = []pdStage{first}
	rep.moe = &rep.pdStages[0].fit
	for _, name := range borrowersWithRuns(all, rep.src.Accelerator) {
		start, err := borrowerStart(r.opts.WriteCatalog, name, rep.moe.Hardware)
		if err != nil {
			return err
		}
		st, err := r.fitPDStage(rep, name, start, configsOn(all, name), []calibrate.Hardware{rep.moe.Hardware})
		if err != nil {
			return err
		}
		rep.pdStages = append(rep.pdStages, st)
	}
	opts := r.options(&rep.moe.Hardware)
	opts.Others = rep.otherHardware()
	if rep.pd, err = calibrate.RunPD(all, opts); err != nil {
		return err
	}
	rep.results, err = calibrate.Run(rep.src.Experiments, r.options(&rep.moe.Hardware))
	return err
}

// fitPDStage fits the MoE terms of accel, starting at start, to cfgs (with
// others priced at their fitted values), and with LeaveOneOut leaves each
// configuration out in turn.
func (r *runner) fitPDStage(rep *Report, accel string, start calibrate.Hardware, cfgs []calibrate.PDConfig,
	others []calibrate.Hardware) (pdStage, error) {
	p := calibrate.Problem{PD: cfgs, Others: others, Start: start, Params: rep.moeParams, Sets: r.sets,
		Workers: r.opts.Workers, Simulate: r.simulate, MaxEvals: r.opts.MaxEvals, Progress: r.log}
	t0 := time.Now()
	fit, err := calibrate.Fit(p)
	if err != nil {
		return pdStage{}, err
	}
	fmt.Fprintf(r.log, "calibrate: MoE fit of %s: %d evaluations in %.1f s, objective %.5g → %.5g\n",
		accel, fit.Evals, time.Since(t0).Seconds(), fit.StartObjective, fit.Objective)
	st := pdStage{accel: accel, fit: fit}
	if r.opts.LeaveOneOut {
		t0 = time.Now()
		p.Start = fit.Hardware
		evals := locoEvalsPerParam * len(p.Params)
		if r.opts.MaxEvals > 0 {
			evals = min(evals, r.opts.MaxEvals)
		}
		if st.heldOut, err = calibrate.LeaveOneConfigOut(p, evals); err != nil {
			return pdStage{}, err
		}
		fmt.Fprintf(r.log, "calibrate: leave-one-configuration-out on %s: %.1f s\n", accel, time.Since(t0).Seconds())
	}
	return st, nil
}

// otherHardware is every second-stage accelerator but the fitted one, at
// its fit.
func (rep *Report) otherHardware() []calibrate.Hardware {
	var out []calibrate.Hardware
	for _, st := range rep.pdStages[1:] {
		out = append(out, st.fit.Hardware)
	}
	return out
}

// configsOn returns the configurations of cfgs run on accelerator.
func configsOn(cfgs []calibrate.PDConfig, accelerator string) []calibrate.PDConfig {
	var out []calibrate.PDConfig
	for _, c := range cfgs {
		if c.Runs[0].Hardware == accelerator {
			out = append(out, c)
		}
	}
	return out
}

// borrowersWithRuns returns the accelerators other than lender that cfgs
// were run on and whose factors the built-in catalog has them borrow from
// lender, in first-seen order.
func borrowersWithRuns(cfgs []calibrate.PDConfig, lender string) []string {
	var out []string
	for _, c := range cfgs {
		name := c.Runs[0].Hardware
		if name == lender || slices.Contains(out, name) {
			continue
		}
		if a, err := hardware.Default().Accelerator(name); err == nil && a.FactorsFrom == lender {
			out = append(out, name)
		}
	}
	return out
}

// borrowerStart is where a borrower's second stage starts: its catalog
// entry (in file, or the built-in catalog) with every factor it borrows
// taken from the lender's fit, and none of the MoE terms set.
func borrowerStart(file, name string, lender calibrate.Hardware) (calibrate.Hardware, error) {
	h, err := StartHardware(file, name)
	if err != nil {
		return h, err
	}
	if h.Accel.Fitted() != "unfitted: factors borrowed from "+lender.Accel.Name {
		return h, fmt.Errorf("--fit-pd: %s has factors of its own; its P/D stage would start from the catalog's", name)
	}
	h.Accel.MFU, h.Accel.MBU, h.Accel.StepOverheadNs = lender.Accel.MFU, lender.Accel.MBU, lender.Accel.StepOverheadNs
	h.Accel.Serving = lender.Accel.Serving
	if h.Link.Name == lender.Link.Name {
		h.Link = lender.Link
	}
	calibrate.ClearMoE(&h)
	return h, nil
}

// pdProvenance is the part of an efficiency_source a second stage writes.
func pdProvenance(rep *Report, m *calibrate.Fitted, accel string) string {
	return fmt.Sprintf("%s to the measured P/D runs of gpt-oss-120b on %s in %s: P/D RMS rel. error %.1f%% (start %.1f%%)",
		paramNames(rep.moeParams), accel, calibrate.PDFile, 100*m.PDRMS, 100*math.Sqrt(m.StartObjective))
}

// rewriteBorrowers writes each borrower's own second-stage terms into its
// catalog entry, with a provenance that says what it borrows and what it
// fitted.
func rewriteBorrowers(data []byte, file string, rep *Report) ([]byte, error) {
	if len(rep.pdStages) < 2 {
		return data, nil
	}
	date := rep.date
	for _, st := range rep.pdStages[1:] {
		kv, _ := calibrate.CatalogFields(rep.moeParams, &st.fit.Hardware)
		src := fmt.Sprintf("ASSUMED: %s's fitted factors (same vLLM software stack; no serving measurements of this device in the calibration data); "+
			"its own (fitted %s by handoff calibrate --fit --fit-pd) %s", rep.src.Accelerator, date,
			pdProvenance(rep, &st.fit, st.accel))
		kv = append(kv, calibrate.KeyValue{Key: "efficiency_source", Value: calibrate.Quote(src)})
		var err error
		if data, err = calibrate.RewriteEntry(data, file, "accelerators", st.accel, "factors_from", kv); err != nil {
			return nil, err
		}
	}
	return data, nil
}
