package report

import (
	"fmt"

	"handoff/results"
)

// classTable is the traffic classes' table: each class's requests, its
// own SLO, its attainment against its target, its request goodput and its
// TTFT and TPOT p99. ok is false without classes.
func classTable(s results.Summary) (table, bool) {
	t := table{ID: "classes", Caption: "per traffic class, each judged against its own SLO", Sortable: true,
		Head: heads("class", "requests_total", "slo_ttft", "slo_tpot", "attainment", "slo_target",
			"request_goodput_rps", "ttft_p99_s", "tpot_p99_s")}
	for _, c := range s.Classes {
		target := results.Percent(c.SLO.Target) + " (missed)"
		if c.SLO.Met {
			target = results.Percent(c.SLO.Target) + " (met)"
		}
		t.Rows = append(t.Rows, []cell{textCell(c.Name), intCell(c.Requests.Total), textCell(limitText(c.SLO.TTFTS)),
			textCell(limitText(c.SLO.TPOTS)), percentCell(c.SLO.Attainment), textCell(target),
			fixedCell(c.SLO.RequestGoodputRPS, 3), numCell(c.TTFT.P99, 0), numCell(c.TPOT.P99, 0)})
	}
	return t, len(t.Rows) > 0
}

// classNote says what the run-wide figures judge when there are classes.
func classNote(s results.Summary) string {
	return fmt.Sprintf("The figures above judge all %d requests against the scenario's slo; the table judges each "+
		"class's requests against the class's own.", s.Requests.Total)
}
