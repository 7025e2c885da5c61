package results

import (
	"bytes"
	"fmt"
	"io"
)

// WriteTable writes s as a human-readable summary for a terminal: a header,
// request counts, a line per kind of reject and drop reason (at most
// maxReasonLines of each), the warnings, a latency table (TTFT, TPOT, ITL in ms; E2E
// in s), the time attribution (mean TTFT components in ms, decode
// components in s, each owner's share), throughput, SLO attainment and
// request goodput, cache hit rate, preemption statistics (when there were any) and
// run statistics. The layout is for people and may change; parse summary.json
// instead.
func WriteTable(w io.Writer, s Summary) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-11s %s   seed %d   %s\n", "scenario", orDash(s.Scenario), s.Seed, Devices(s.GPUs, s.DeviceNoun()))
	fmt.Fprintf(&b, "%-11s total %d   completed %d   rejected %d   dropped %d", "requests",
		s.Requests.Total, s.Requests.Completed, s.Requests.Rejected, s.Requests.Dropped)
	if s.Requests.Failed > 0 {
		fmt.Fprintf(&b, "   failed %d", s.Requests.Failed)
	}
	if s.Requests.Abandoned > 0 {
		fmt.Fprintf(&b, "   abandoned %d", s.Requests.Abandoned)
	}
	b.WriteByte('\n')
	writeReasons(&b, "rejected", "reject_reasons", s.RejectReasons)
	writeReasons(&b, "dropped", "drop_reasons", s.DropReasons)
	writeReasons(&b, "failed", "fail_reasons", s.FailReasons)
	writeReasons(&b, "abandoned", "abandon_reasons", s.AbandonReasons)
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "%-11s %s\n", "warning", w)
	}
	b.WriteByte('\n')
	writeLatency(&b, s)
	b.WriteByte('\n')
	writeAttribution(&b, s.Attribution)
	writeWaits(&b, s.Waits)
	b.WriteByte('\n')
	fmt.Fprintf(&b, "%-11s %.2f req/s   %.1f output tok/s\n", "throughput",
		s.Throughput.RequestsPerS, s.Throughput.OutputTokensPerS)
	fmt.Fprintf(&b, "%-11s %s\n", "SLO", sloLine(s.SLO, s.DeviceNoun()))
	writeClasses(&b, s.Classes, s.DeviceNoun())
	fmt.Fprintf(&b, "%-11s prefix hit rate %.1f%%", "cache", 100*s.PrefixCacheHitRate)
	if s.DecodeFirstBounces > 0 {
		fmt.Fprintf(&b, "   decode-first bounces %d", s.DecodeFirstBounces)
	}
	b.WriteByte('\n')
	b.WriteString(tierLine(s.KVTiers))
	b.WriteString(specLine(s.Speculative))
	writePreemption(&b, s.Preemption)
	writeLockups(&b, s.Preemption, s.Instances)
	writeFleet(&b, s.Fleet, s.DeviceNoun())
	fmt.Fprintf(&b, "%-11s sim %.3f s   wall %.2f s   %d events   %d preemptions\n", "run",
		s.SimTimeS, s.WallTimeS, s.Events, s.Preemptions)
	_, err := w.Write(b.Bytes())
	return err
}

// writeLatency writes the latency table: one row per metric, columns mean,
// p50, p90, p99, max, in the unit named in the row label.
func writeLatency(b *bytes.Buffer, s Summary) {
	fmt.Fprintf(b, "%-11s %10s %10s %10s %10s %10s\n", "latency", "mean", "p50", "p90", "p99", "max")
	rows := []struct {
		label string
		st    Stats
		scale float64 // seconds → unit
	}{
		{"  TTFT ms", s.TTFT, 1e3},
		{"  TPOT ms", s.TPOT, 1e3},
		{"  ITL ms", s.ITL, 1e3},
		{"  E2E s", s.E2E, 1},
	}
	for _, r := range rows {
		fmt.Fprintf(b, "%-11s", r.label)
		for _, v := range [...]float64{r.st.Mean, r.st.P50, r.st.P90, r.st.P99, r.st.Max} {
			fmt.Fprintf(b, " %10.3f", v*r.scale)
		}
		b.WriteByte('\n')
	}
}

// sloLine renders limits, attainment against the target, and request
// goodput, also per device (called noun).
func sloLine(slo SLOSummary, noun string) string {
	met := "missed"
	if slo.Met {
		met = "met"
	}
	line := fmt.Sprintf("TTFT ≤ %s, TPOT ≤ %s: attainment %s (target %s: %s), request goodput %.2f req/s",
		limitMs(slo.TTFTS), limitMs(slo.TPOTS), Percent(slo.Attainment), targetPercent(slo.Target), met, slo.RequestGoodputRPS)
	if slo.RequestGoodputRPSPerGPU > 0 {
		line += fmt.Sprintf(" (%.3f per %s)", slo.RequestGoodputRPSPerGPU, noun)
	}
	return line
}

// limitMs renders an SLO limit given in seconds as milliseconds; 0 is "∞".
func limitMs(s float64) string {
	if s == 0 {
		return "∞"
	}
	return fmt.Sprintf("%.4g ms", s*1e3)
}

// maxReasonLines is how many kinds of reason the table shows for each
// status; summary.json has them all.
const maxReasonLines = 3

// writeReasons writes one line per kind of reason, most requests first:
// the count and the first such request with its reason in full. Past
// maxReasonLines it says how many kinds are left out and where they are.
func writeReasons(b *bytes.Buffer, status, key string, groups []ReasonGroup) {
	for i, g := range groups {
		if i == maxReasonLines {
			fmt.Fprintf(b, "  %-9s and %d more kinds of reason (summary.json %s)\n", status, len(groups)-i, key)
			return
		}
		fmt.Fprintf(b, "  %-9s %d like request %d: %s\n", status, g.Count, g.ExampleRequest, orDash(g.ExampleReason))
	}
}

// orDash returns s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
