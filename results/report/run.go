package report

import (
	"fmt"
	"strings"

	"handoff/results"
	"handoff/results/rundir"
)

// runPage builds the report of a run directory (handoff run -o DIR),
// read through results/rundir: summary.json, scenario.yaml if present,
// and the plots DrawDir draws from summary.json, requests.csv,
// timeline.csv and fleet.csv.
func runPage(dir string) (*page, error) {
	sum, err := rundir.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	figs, err := drawnPlots(dir)
	if err != nil {
		return nil, err
	}
	scen, err := readScenario(dir)
	if err != nil {
		return nil, err
	}
	isTimeline := func(n string) bool { return strings.HasPrefix(n, "timeline_") }
	p := &page{Title: "run " + orDash(sum.Scenario), Kind: "run", Dir: dir}
	p.Sections = []section{
		scenarioSection(sum, scen),
		summarySection(sum, pick(figs, named("ttft_cdf", "tpot_cdf"))),
		sloSection(sum),
		attributionSection(sum.Attribution, sum.Waits, pick(figs, named("attribution", "attribution_owner"))),
		preemptionSection(sum),
	}
	if sum.Preemption.Lockups > 0 {
		p.Sections = append(p.Sections, lockupSection(sum))
	}
	p.Sections = append(p.Sections, utilizationSection(sum, pick(figs, isTimeline)))
	if len(sum.KVTiers) > 0 {
		p.Sections = append(p.Sections, tierSection(sum.KVTiers))
	}
	if sum.Fleet != nil {
		p.Sections = append(p.Sections, changingFleetSection(sum.Fleet, sum.DeviceNoun(), pick(figs, named("fleet"))))
	}
	return p, nil
}

// summarySection holds the request counts, the latency table, the
// throughput and the run's statistics, with the latency CDFs.
func summarySection(s results.Summary, cdfs []figure) section {
	r := s.Requests
	sec := section{ID: "summary", Title: "Summary", Def: definitions["summary"], Figures: cdfs}
	sec.Facts = []fact{
		{"requests", fmt.Sprint(r.Total), Define("requests_total")},
		{"completed", fmt.Sprint(r.Completed), Define("requests_completed")},
		{"rejected", fmt.Sprint(r.Rejected), Define("requests_rejected")},
		{"dropped", fmt.Sprint(r.Dropped), Define("requests_dropped")},
		{"failed", fmt.Sprint(r.Failed), Define("requests_failed")},
		{"abandoned", fmt.Sprint(r.Abandoned), Define("requests_abandoned")},
		{"throughput", fmt.Sprintf("%.2f req/s", s.Throughput.RequestsPerS), Define("throughput_rps")},
		{"offered", fmt.Sprintf("%.2f req/s", s.Throughput.OfferedPerS), Define("offered_rps")},
		{"output tokens", fmt.Sprintf("%.1f tok/s", s.Throughput.OutputTokensPerS), Define("output_tokens_per_s")},
		{"per " + s.DeviceNoun(), fmt.Sprintf("%.1f tok/s", s.Throughput.OutputTokensPerSPerGPU), Define("output_tokens_per_s_per_gpu")},
		{"interactivity", fmt.Sprintf("%.1f tok/s per user", s.Throughput.InteractivityPerUser), Define("interactivity_tokens_per_s_per_user")},
		{"prefix cache hits", results.Percent(s.PrefixCacheHitRate), Define("prefix_cache_hit_rate")},
		{"simulated time", fmt.Sprintf("%.3f s", s.SimTimeS), Define("sim_time_s")},
		{"events", fmt.Sprint(s.Events), Define("events")},
		{"wall time", fmt.Sprintf("%.2f s", s.WallTimeS), Define("wall_time_s")},
	}
	sec.Tables = []table{latencyTable(s)}
	if t, ok := reasonTable(s); ok {
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}

// latencyTable has one row per latency metric, in ms (E2E in s).
func latencyTable(s results.Summary) table {
	t := table{ID: "latency", Caption: "latency over completed requests"}
	t.Head = heads("metric", "mean", "p50", "p90", "p99", "max")
	rows := []struct {
		name, unit string
		st         results.Stats
		scale      float64
	}{{"ttft", "ms", s.TTFT, 1e3}, {"tpot", "ms", s.TPOT, 1e3}, {"itl", "ms", s.ITL, 1e3}, {"e2e", "s", s.E2E, 1}}
	for _, r := range rows {
		row := []cell{{Text: strings.ToUpper(r.name) + " " + r.unit, Def: definitions[r.name]}}
		for _, v := range []float64{r.st.Mean, r.st.P50, r.st.P90, r.st.P99, r.st.Max} {
			row = append(row, fixedCell(v*r.scale, 3))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// reasonTable lists each kind of reason a request was not served, with
// its count and first example; ok is false when every request completed.
func reasonTable(s results.Summary) (table, bool) {
	t := table{ID: "reasons", Caption: "why requests were not served", Head: heads("status", "reason_kind", "reason_count", "first_request", "example_reason")}
	t.Head[1].Text, t.Head[2].Text, t.Head[3].Text, t.Head[4].Text = "kind", "count", "first request", "its reason"
	groups := []struct {
		status string
		gs     []results.ReasonGroup
	}{{"rejected", s.RejectReasons}, {"dropped", s.DropReasons}, {"failed", s.FailReasons}, {"abandoned", s.AbandonReasons}}
	for _, g := range groups {
		for _, r := range g.gs {
			t.Rows = append(t.Rows, []cell{{Text: g.status, Def: Define("requests_" + g.status)}, textCell(r.Kind), intCell(r.Count),
				intCell(int64(r.ExampleRequest)), textCell(r.ExampleReason)})
		}
	}
	return t, len(t.Rows) > 0
}

// sloSection states the SLO, its attainment and the request goodput.
func sloSection(s results.Summary) section {
	slo := s.SLO
	met := "missed"
	if slo.Met {
		met = "met"
	}
	sec := section{ID: "slo", Title: "SLO attainment and goodput", Def: Define("attainment"),
		Facts: []fact{
			{"TTFT limit", limitText(slo.TTFTS), Define("slo_ttft")},
			{"TPOT limit", limitText(slo.TPOTS), Define("slo_tpot")},
			{"good requests", fmt.Sprint(slo.Good), Define("good")},
			{"attainment", results.Percent(slo.Attainment), Define("attainment")},
			{"target", results.Percent(slo.Target) + " (" + met + ")", Define("slo_target")},
			{"request goodput", fmt.Sprintf("%.3f req/s", slo.RequestGoodputRPS), Define("request_goodput_rps")},
			{"request goodput per " + s.DeviceNoun(), fmt.Sprintf("%.4g req/s over %s", slo.RequestGoodputRPSPerGPU, results.Devices(s.GPUs, s.DeviceNoun())),
				Define("request_goodput_rps_per_gpu")},
		},
		Notes: []string{"The max goodput — the highest offered rate whose attainment meets the target — is a search over " +
			"runs: handoff goodput finds it, and a report of its directory shows it."},
	}
	if t, ok := classTable(s); ok {
		sec.Tables = append(sec.Tables, t)
		sec.Notes = append(sec.Notes, classNote(s))
	}
	return sec
}

// limitText renders an SLO limit in s as ms; 0 is no limit.
func limitText(s float64) string {
	if s == 0 {
		return "∞"
	}
	return fmt.Sprintf("%.4g ms", s*1e3)
}

// orDash returns s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
