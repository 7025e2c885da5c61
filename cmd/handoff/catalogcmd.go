package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"handoff/hardware"
	"handoff/hardware/units"
	"handoff/models/llm"
)

func newCatalogCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:       "catalog hardware|models",
		Short:     "List the built-in hardware (accelerators and links) or served models",
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"hardware", "models"},
		RunE: func(_ *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			if args[0] == "hardware" {
				listHardware(tw, hardware.Default())
			} else {
				listModels(tw, llm.Default())
			}
			return tw.Flush()
		},
	}
}

func listHardware(w io.Writer, c *hardware.Catalog) {
	fmt.Fprintln(w, "ACCELERATOR\tKIND\tMEMORY\tBANDWIDTH\tBF16 DENSE\tMFU\tMBU\tSTEP OVERHEAD\tSCALE-UP\tDOMAIN\t$/HOUR")
	for _, a := range c.Accelerators() {
		domain := "-" // not bounded
		if a.ScaleUpDomain > 0 {
			domain = strconv.Itoa(a.ScaleUpDomain)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%.2f\n", a.Name, a.Kind,
			human(a.MemoryBytes, "B"), human(a.MemoryBandwidthBps, "B/s"),
			human(a.BF16FLOPS, "FLOPS"), a.MFU, a.MBU, units.FormatDuration(a.StepOverheadNs),
			a.ScaleUpLink, domain, a.CostPerHour)
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

func listModels(w io.Writer, c *llm.Catalog) {
	fmt.Fprintln(w, "MODEL\tLAYERS\tATTENTION\tSLIDING\tPARAMS\tACTIVE\tWEIGHT BITS\tWEIGHTS\tKV BITS\tKV/TOKEN\tMAX CONTEXT")
	for _, m := range c.Models() {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%.1fB\t%.1fB\t%s\t%s\t%s\t%s\t%d\n", m.Name, m.Layers, m.AttentionKind(),
			sliding(m), m.ParamsTotal/1e9, m.ParamsActive/1e9, bits(m.WeightBytes), human(m.WeightBytesTotal(), "B"),
			bits(m.KVBytes), human(m.KVBytesPerToken(), "B"), m.MaxContext)
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

// bits renders a size in bytes per element as bits: 2 → "16", 0.56 → "4.48".
func bits(bytes float64) string { return strconv.FormatFloat(bytes*8, 'f', -1, 64) }

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
