package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"handoff/hardware"
	"handoff/models/engine"
	"handoff/models/llm"
	"handoff/models/units"
)

func newCatalogCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:       "catalog hardware|models|engines",
		Short:     "List the built-in hardware (accelerators and links), served models, or engine releases and their rules",
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"hardware", "models", "engines"},
		RunE: func(_ *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			switch args[0] {
			case "hardware":
				listHardware(tw, hardware.Default())
			case "models":
				listModels(tw, llm.Default())
			default:
				listEngines(tw)
			}
			return tw.Flush()
		},
	}
}

func listHardware(w io.Writer, c *hardware.Catalog) {
	fmt.Fprintln(w, "ACCELERATOR\tKIND\tMEMORY\tBANDWIDTH\tBF16 DENSE\tFP8 DENSE\tFP4 DENSE\tMFU\tMBU\tSTEP OVERHEAD\tSCALE-UP\tDOMAIN\tSCALE-OUT\t$/HOUR")
	for _, a := range c.Accelerators() {
		domain := "-" // not bounded
		if a.ScaleUpDomain > 0 {
			domain = strconv.Itoa(a.ScaleUpDomain)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%.2f\n", a.Name, a.Kind,
			human(a.MemoryBytes, "B"), human(a.MemoryBandwidthBps, "B/s"), human(a.BF16FLOPS, "FLOPS"),
			orDash(a.FP8FLOPS, "FLOPS"), orDash(a.FP4FLOPS, "FLOPS"), a.MFU, a.MBU, units.FormatDuration(a.StepOverheadNs),
			orNone(a.ScaleUpLink), domain, orNone(a.ScaleOutLink), a.CostPerHour)
	}
	fmt.Fprintln(w)
	listServing(w, c)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "LINK\tBANDWIDTH (PER DIRECTION)\tLATENCY")
	for _, l := range c.Links() {
		fmt.Fprintf(w, "%s\t%s\t%s\n", l.Name, human(l.BandwidthBps, "B/s"), units.FormatDuration(l.LatencyNs))
	}
}

// listServing prints each accelerator's serving-stack costs (hardware.Serving)
// and whether its factors are its own or borrowed.
func listServing(w io.Writer, c *hardware.Catalog) {
	fmt.Fprintln(w, "ACCELERATOR\tDECODE MFU\tALL-REDUCE BW\tSTEP/SEQ\tSTEP/TOKEN\tLAYER FLOOR (GRAPH/MIXED)\tFRONT END\tTOKENIZE/TOKEN\tFIRST EMIT\tFINAL EMIT\tFACTORS")
	ns := func(v float64) string { return units.FormatDuration(int64(v + 0.5)) }
	for _, a := range c.Accelerators() {
		v := a.Serving
		factors := a.Fitted()
		if factors == "" {
			factors = "own (see catalog efficiency_source)"
		}
		fmt.Fprintf(w, "%s\t%.2f\t%s\t%s\t%s\t%s / %s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.EffectiveDecodeMFU(), allReduceBW(v.AllReduceBW),
			ns(v.StepPerSeqNs), ns(v.StepPerTokenNs), ns(v.LayerFloorNs), ns(v.LayerFloorMixedNs), ns(v.FrontendNs),
			ns(v.TokenizeNsPerToken), ns(v.FirstEmitNs), ns(v.FinalEmitNs), factors)
	}
}

// listEngines prints every rule that changed between the vLLM releases
// handoff has presets for: from which release each value is the default,
// the values a pool may set there, what changed it and where it lives;
// then the engine kinds and their rules.
func listEngines(w io.Writer) {
	vs := engine.VLLMVersions()
	fmt.Fprintf(w, "vLLM releases (engine.vllm): %s … %s, and %s (%s)\n\n", vs[0], vs[len(vs)-2], vs[len(vs)-1], vs[len(vs)-2])
	fmt.Fprintln(w, "RULE\tFROM\tDEFAULT\tALLOWED\tCHANGE\tWHERE")
	for _, r := range engine.VLLMRules() {
		for _, st := range r.Steps {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Field, st.From, st.Value, strings.Join(st.Allowed, ", "), st.Change, r.Source)
		}
	}
	fmt.Fprintf(w, "\nEngine kinds (engine.kind, default %s):\n\n", engine.KindVLLM)
	fmt.Fprintln(w, "KIND\tADMISSION\tOUT OF KV\tPUT BACK TO\tWHERE")
	for _, k := range engine.KindSummaries() {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Kind, k.Admission, k.OutOfKV, k.Requeue, k.Source)
	}
}

func listModels(w io.Writer, c *llm.Catalog) {
	fmt.Fprintln(w, "MODEL\tLAYERS\tATTENTION\tSLIDING\tPARAMS\tACTIVE\tEXPERTS\tSHARED\tDENSE LAYERS\tWEIGHT DTYPE\tWEIGHTS\tKV DTYPE\tKV/TOKEN\tMAX CONTEXT")
	for _, m := range c.Models() {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%.1fB\t%.1fB\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", m.Name, m.Layers, m.AttentionKind(),
			sliding(m), m.ParamsTotal/1e9, m.ParamsActive/1e9, experts(m), moeCount(m, m.SharedExperts),
			moeCount(m, m.DenseLayers), weightDTypes(m), human(m.WeightBytesTotal(), "B"),
			precision(m.KVDType, m.KVBytes), human(m.KVBytesPerToken(), "B"), m.MaxContext)
	}
}

// sliding renders a model's sliding-window layers as "LAYERS × WINDOW",
// "-" without any (KV/TOKEN counts every layer, an upper bound for them).
func sliding(m *llm.Model) string {
	if m.SlidingLayers == 0 {
		return "-"
	}
	return fmt.Sprintf("%d × %d", m.SlidingLayers, m.SlidingWindow)
}

// experts renders an MoE model's routing as "top-K of E", "-" for a dense one.
func experts(m *llm.Model) string {
	if m.Experts == 0 {
		return "-"
	}
	return fmt.Sprintf("top-%d of %d", m.ExpertsPerTok, m.Experts)
}

// moeCount renders a count only an MoE model has, "-" for a dense one.
func moeCount(m *llm.Model, n int) string {
	if m.Experts == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// weightDTypes renders the weights' format, "shared/experts" where the
// routed experts are stored differently: "fp8", "bf16/mxfp4".
func weightDTypes(m *llm.Model) string {
	w := precision(m.WeightDType, m.WeightBytes)
	if m.Experts == 0 || m.ExpertDType == m.WeightDType && m.ExpertWeightBytes == m.WeightBytes {
		return w
	}
	return w + "/" + precision(m.ExpertDType, m.ExpertWeightBytes)
}

// precision renders a dtype, or a size without one in bits per element:
// "bf16", "4.48 bits".
func precision(d llm.DType, bytes float64) string {
	if d != "" {
		return string(d)
	}
	return strconv.FormatFloat(bytes*8, 'f', -1, 64) + " bits"
}

// orDash renders v like human, "-" for 0 (the device lacks it).
func orDash(v float64, unit string) string {
	if v == 0 {
		return "-"
	}
	return human(v, unit)
}

// orNone renders a link name, "-" for none.
func orNone(name string) string {
	if name == "" {
		return "-"
	}
	return name
}

// human renders v with a decimal SI prefix and three significant digits,
// for reading (catalog files keep exact values).
func human(v float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for v >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + prefixes[i] + unit
}

// allReduceBW renders the share of the link an all-reduce reaches.
func allReduceBW(e float64) string {
	if e == 0 {
		return "link"
	}
	return strconv.FormatFloat(e, 'g', 3, 64) + " × link"
}
