package report

import (
	"testing"

	"handoff/results"
)

// TestSLOSectionClasses: a run with classes gets the classes' table in
// its SLO section, a row per class; one without gets none.
func TestSLOSectionClasses(t *testing.T) {
	s := results.Summary{Requests: results.RequestCounts{Total: 3}, Classes: []results.ClassSummary{
		{Name: "interactive", Requests: results.RequestCounts{Total: 1}, SLO: results.SLOSummary{TTFTS: 0.5, Attainment: 1, Target: 0.9, Met: true}},
		{Name: "batch", Requests: results.RequestCounts{Total: 2}, SLO: results.SLOSummary{TTFTS: 5, Attainment: 0.5, Target: 0.9}}}}
	sec := sloSection(s)
	if len(sec.Tables) != 1 || len(sec.Tables[0].Rows) != 2 {
		t.Fatalf("tables %+v, want the classes' with 2 rows", sec.Tables)
	}
	row := sec.Tables[0].Rows[1]
	if row[0].Text != "batch" || row[2].Text != "5000 ms" || row[4].Text != results.Percent(0.5) || row[5].Text != "90.0% (missed)" {
		t.Errorf("batch row %+v", row)
	}
	for _, h := range sec.Tables[0].Head {
		if h.Def == "" {
			t.Errorf("head %q has no definition", h.Text)
		}
	}
	if sec := sloSection(results.Summary{}); len(sec.Tables) != 0 {
		t.Errorf("a run without classes has tables %+v", sec.Tables)
	}
}
