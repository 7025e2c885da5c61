package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
	"handoff/results/rundir"
)

// TestLockupSection: a run whose prefiller was pinned waiting for a
// decoder gets a Lock-ups section after the preemption one: each kind's
// spells and time, the instance that locked up, and the chain, each
// figure with its definition.
func TestLockupSection(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"links.csv", "requests.csv", "scenario.yaml", "timeline.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", "run", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := rundir.ReadSummary(filepath.Join("testdata", "run"))
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]results.LockupFigures{"deadlock": {}, "preemption_loop": {}, "pinned": {Spells: 3, S: 12.5}}
	sum.Preemption.Lockups, sum.Preemption.LockupS, sum.Preemption.LockupKinds = 3, 12.5, pinned
	sum.Preemption.LockupChains = []results.LockupChainSummary{{Chain: "prefill-0 pinned → decode-1 (own kv_blocks)",
		Instances: []string{"prefill-0", "decode-1"}, Spells: 3, S: 12.5, FirstS: 40, LongestS: 9, LongestFromS: 61.25,
		Example: "prefill-0 pinned since 61.250 s → decode-1 (own kv_blocks)"}}
	sum.Instances[0].Lockups, sum.Instances[0].LockupS, sum.Instances[0].LockupKinds = 3, 12.5, pinned
	var b bytes.Buffer
	if err := results.WriteJSON(&b, sum); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SummaryFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var sections []string
	var text strings.Builder
	for _, e := range parsePage(t, render(t, dir)) {
		if e.name == "section" {
			sections = append(sections, e.attr["id"])
		}
		text.WriteString(e.text + "|")
		switch e.name {
		case "h2", "dt", "th", "figure":
			if strings.TrimSpace(e.attr["title"]) == "" {
				t.Errorf("<%s> %q has no definition (title)", e.name, strings.TrimSpace(e.text))
			}
		}
	}
	if want := "scenario summary slo attribution preemption lockups utilization"; strings.Join(sections, " ") != want {
		t.Errorf("sections %v, want %s", sections, want)
	}
	for _, want := range []string{"3 spells, 12.500 s", "|" + sum.Instances[0].Name + "|", "3 (12.500 s)",
		"prefill-0 pinned → decode-1 (own kv_blocks)", "61.250", "prefill-0 pinned since 61.250 s → decode-1 (own kv_blocks)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
