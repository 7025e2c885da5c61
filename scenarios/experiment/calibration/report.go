package calibration

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"handoff/results"
	"handoff/scenarios/calibrate"
)

// WriteMarkdown renders the report as Markdown: the comparison per
// stage and its targets, then (as far as they ran) the fit, leave one
// model out and the measured P/D runs.
func (rep *Report) WriteMarkdown(w io.Writer) error {
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
	writeHeldOutConfigs(&b, rep)
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

// writeFit writes the fitted parameters and the fit's figures.
func writeFit(b *strings.Builder, rep *Report) {
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

// writeMoEFit writes the second stage's parameters (--fit-pd), for the
// fitted accelerator and each borrower with runs of its own.
func writeMoEFit(b *strings.Builder, rep *Report) {
	for i, st := range rep.pdStages {
		m := &st.fit
		fmt.Fprintf(b, "\n## Fit: %s's MoE terms (--fit-pd)\n\n", st.accel)
		fmt.Fprintf(b, "Fitted to the measured P/D runs of gpt-oss-120b on %s in %s, holding the serving fit above: "+
			"P/D RMS relative error %.1f%%, from %.1f%% at the start, after %d evaluations.", st.accel, calibrate.PDFile,
			100*m.PDRMS, 100*math.Sqrt(m.StartObjective), m.Evals)
		if i == 0 {
			b.WriteString(" The serving comparison at the top is simulated again with them.\n")
		} else {
			fmt.Fprintf(b, " Its other factors are %s's, as the catalog has it borrow them.\n", rep.src.Accelerator)
		}
		b.WriteString("\n| parameter | bounds | fitted | what it moves |\n|---|---|---|---|\n")
		accel, _ := calibrate.CatalogFields(rep.moeParams, &m.Hardware)
		value := map[string]string{}
		for _, kv := range accel {
			value[kv.Key] = kv.Value
		}
		for _, p := range rep.moeParams {
			fmt.Fprintf(b, "| %s | [%s, %s] | %s | %s |\n", p.Name, sig(p.Lo), sig(p.Hi), value[p.Name], p.Doc)
		}
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
