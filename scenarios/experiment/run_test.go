package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/workload"
	"handoff/sim"
)

func load(t *testing.T, sets ...string) *scenarios.Loaded {
	t.Helper()
	var ss []scenarios.Set
	for _, s := range append([]string{"workload.synthetic.requests=50"}, sets...) {
		set, err := scenarios.ParseSet(s)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, set)
	}
	l, err := scenarios.Load("../quickstart.yaml", ss...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRun: the pipeline without a CLI — the summary of the run, the
// configure hooks applied before it, the warnings on the writer given.
func TestRun(t *testing.T) {
	var warn bytes.Buffer
	configured := false
	sum, res, err := Run(load(t, "router.policy=dynamo", "router.dynamo.kv_overlap_score_weight=2"), &warn,
		func(*sim.Config) { configured = true })
	if err != nil {
		t.Fatal(err)
	}
	if !configured || sum.Requests.Total != 50 || res.Requests != 50 || res.Records != nil || len(InstanceNames(res)) != 4 {
		t.Errorf("configured %v, %d requests summarised, %d run, %d records kept (want them streamed), %d instances",
			configured, sum.Requests.Total, res.Requests, len(res.Records), len(InstanceNames(res)))
	}
	if !strings.Contains(warn.String(), "warning:") || !strings.Contains(warn.String(), "kv_overlap_score_weight") {
		t.Errorf("warnings %q, want the deprecated field's", warn.String())
	}
	empty := filepath.Join(t.TempDir(), "empty.csv")
	if err := os.WriteFile(empty, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := load(t)
	l.Workload.Synthetic, l.Workload.Trace = nil, &workload.Trace{Format: "azure", Path: empty}
	if _, _, err := Run(l, nil); err == nil || !strings.Contains(err.Error(), "empty.csv: the workload has no requests") {
		t.Errorf("a workload without requests: %v", err)
	}
}

// TestRunWarnsOfClamps: a trace's 0-token prompts and outputs, served as
// 1 token, are counted in the summary's warnings, which the printed
// summary shows; a run that changed nothing has none.
func TestRunWarnsOfClamps(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "zeros.csv")
	rows := "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,0,5\n2023-11-16 18:00:01,40,0\n" +
		"2023-11-16 18:00:02,0,0\n2023-11-16 18:00:03,50,6\n"
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	l := load(t)
	l.Workload.Synthetic, l.Workload.Trace = nil, &workload.Trace{Format: "azure", Path: trace}
	sum, _, err := Run(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"workload: 2 requests had a 0-token prompt, served as 1 token",
		"workload: 2 requests had 0 output tokens, served as 1 token"}
	if !slices.Equal(sum.Warnings, want) {
		t.Errorf("warnings %q, want %q", sum.Warnings, want)
	}
	var table bytes.Buffer
	if err := results.WriteTable(&table, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "warning     "+want[0]) || !strings.Contains(table.String(), want[1]) {
		t.Errorf("the printed summary does not show the warnings:\n%s", table.String())
	}
	if sum, _, err := Run(load(t), nil); err != nil || sum.Warnings != nil {
		t.Errorf("a synthetic workload: warnings %q, error %v", sum.Warnings, err)
	}
}

// TestLoadReplay: the replay of a loaded scenario is its file, the seed
// it runs with (the flag's over the scenario's) and the --set flags as
// typed.
func TestLoadReplay(t *testing.T) {
	sets := []string{"workload.synthetic.requests=5"}
	l, rp, err := LoadReplay("../quickstart.yaml", sets, 7)
	if err != nil {
		t.Fatal(err)
	}
	if rp.File != l.File || rp.Seed != 7 || l.Seed != 7 || len(rp.Sets) != 1 || rp.Sets[0] != sets[0] {
		t.Errorf("replay %+v of %s at seed %d", rp, l.File, l.Seed)
	}
	if _, _, err := LoadReplay("../quickstart.yaml", []string{"nope"}, 0); err == nil {
		t.Error("a bad --set loads")
	}
}
