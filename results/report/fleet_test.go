package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
)

// TestRunFleetSection: a run whose fleet changed has a Fleet section with
// its figures, defined, and the fleet plot; the fixture's run, whose
// fleet is fixed, has none (TestWriteEveryKind).
func TestRunFleetSection(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "run"))); err != nil {
		t.Fatal(err)
	}
	fleet := "time_s,pool,ready,requested,draining\n0.000000000,prefill,1,0,0\n0.000000000,decode,1,0,0\n" +
		"1.000000000,decode,1,2,0\n1.500000000,decode,3,0,0\n"
	if err := os.WriteFile(filepath.Join(dir, results.FleetFile), []byte(fleet), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := results.ReadSummary(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	sum.Device = "GPU" // the fixture is older than the field
	sum.Fleet = &results.FleetSummary{GPUHours: 0.125, CostUSD: 0.5, ScaleUps: 2, Crashes: 1, FailedOver: 3, Lost: 1,
		Pools: []results.PoolSummary{{Pool: "decode", GPUHours: 0.1, MinReady: 1, MaxReady: 3, ChangeCount: 2}}}
	f, err := os.Create(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.WriteJSON(f, sum); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var sections, plots, facts []string
	for _, e := range parsePage(t, render(t, dir)) {
		switch e.name {
		case "section":
			sections = append(sections, e.attr["id"])
		case "figure":
			plots = append(plots, e.attr["id"])
		case "dt":
			facts = append(facts, strings.TrimSpace(e.text))
		}
		if (e.name == "dt" || e.name == "th" || e.name == "figure") && strings.TrimSpace(e.attr["title"]) == "" {
			t.Errorf("<%s> %q has no definition", e.name, strings.TrimSpace(e.text))
		}
	}
	if !slices.Contains(sections, "fleet") || !slices.Contains(plots, "plot-fleet") {
		t.Errorf("sections %v, plots %v: want the fleet section and its plot", sections, plots)
	}
	for _, want := range []string{"GPU-hours", "cost", "scale-ups", "crashes", "failed over", "lost"} {
		if !slices.Contains(facts, want) {
			t.Errorf("no fact %q among %v", want, facts)
		}
	}
}
