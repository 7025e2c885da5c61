package calibration

import (
	"fmt"
	"strings"

	"handoff/scenarios/calibrate"
)

// locoMetrics are the P/D figures the leave-one-configuration-out table
// shows, by calibrate.PDTargets' metric names.
var locoMetrics = []string{"TTFT mean", "TPOT mean", "output throughput"}

// writeHeldOutConfigs writes the leave-one-configuration-out section:
// each measured P/D configuration's runs predicted by the second stage
// refitted without it, beside the same runs under the fit to all, then the
// figures over every held-out run against 1.5 times the P/D targets.
func writeHeldOutConfigs(b *strings.Builder, rep *Report) {
	var held []calibrate.HeldOutConfig
	for _, st := range rep.pdStages {
		held = append(held, st.heldOut...)
	}
	if len(held) == 0 {
		return
	}
	b.WriteString(locoHeader)
	b.WriteString("| held out | runs | refit |")
	for _, m := range locoMetrics {
		fmt.Fprintf(b, " %s: held out / in the fit |", m)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(locoMetrics)) + "\n")
	inFit := map[string][]calibrate.PDRow{}
	for _, r := range rep.pd {
		inFit[r.Config] = r.Rows
	}
	var all []calibrate.PDRow
	for _, h := range held {
		rows := calibrate.PDRows(h.Result)
		all = append(all, rows...)
		fmt.Fprintf(b, "| %s | %d | %s |", h.Config, len(rows), refitValues(rep.moeParams, &h.Fit))
		out, in := targetsByName(rows), targetsByName(inFit[h.Config])
		for _, m := range locoMetrics {
			fmt.Fprintf(b, " %+.1f%% / %+.1f%% |", 100*out[m].Signed, 100*in[m].Signed)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| metric | held-out runs | mean abs. error (1.5 × target) | mean signed error | met |\n|---|---|---|---|---|\n")
	for _, t := range calibrate.PDTargets(all) {
		if t.MAEMax == 0 {
			continue
		}
		met := "yes"
		if t.MAE > 1.5*t.MAEMax {
			met = "no"
		}
		fmt.Fprintf(b, "| %s | %d | %.1f%% (≤ %.1f%%) | %+.1f%% | %s |\n", t.Metric, t.N, 100*t.MAE, 150*t.MAEMax, 100*t.Signed, met)
	}
}

// refitValues is a refit's values, key=value, in the catalog's form.
func refitValues(ps []calibrate.Param, f *calibrate.Fitted) string {
	kv, _ := calibrate.CatalogFields(ps, &f.Hardware)
	parts := make([]string, len(kv))
	for i, x := range kv {
		parts[i] = x.Key + " " + x.Value
	}
	return strings.Join(parts, ", ")
}

// targetsByName indexes PDTargets(rows) by metric.
func targetsByName(rows []calibrate.PDRow) map[string]calibrate.PDTarget {
	out := map[string]calibrate.PDTarget{}
	for _, t := range calibrate.PDTargets(rows) {
		out[t.Metric] = t
	}
	return out
}

const locoHeader = `
## Leave one configuration out (measured P/D runs)

Each P/D configuration (a P:D split and placement over its whole concurrency range) predicted by the
MoE terms refitted to the other configurations on its accelerator alone (starting from the fit to all,
at most 20 evaluations per term), beside the same runs under the fit to all: mean signed error over the
configuration's runs. A refit that finds nothing better than the fit to all keeps its values (most
rows: one configuration of ten barely moves the optimum). An accelerator with one configuration has
nothing to refit on and is left out.

`
