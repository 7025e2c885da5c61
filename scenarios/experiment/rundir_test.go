package experiment

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
)

// TestWriteRunDir writes a run's directory without a CLI: the files of
// results/layout.go (links.csv when the run has links), the
// summary as the run summarised it, one requests.csv row per request, and
// an effective scenario that loads again.
func TestWriteRunDir(t *testing.T) {
	l := load(t)
	sum, res, err := Run(l, nil, WithTimeline, KeepRecords)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "new", "run")
	if err := WriteRunDir(dir, &Finished{Loaded: l, Summary: sum, Result: res}); err != nil {
		t.Fatal(err)
	}
	want := []string{results.RequestsFile, results.ScenarioFile, results.SummaryFile, results.TimelineFile}
	if len(res.Links) > 0 {
		want = append(want, results.LinksFile)
	}
	slices.Sort(want)
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	var back results.Summary
	if err := json.Unmarshal(readFile(t, dir, results.SummaryFile), &back); err != nil || back.Requests.Total != 50 {
		t.Errorf("summary.json: %v, %d requests", err, back.Requests.Total)
	}
	if n := strings.Count(string(readFile(t, dir, results.RequestsFile)), "\n"); n != 51 {
		t.Errorf("requests.csv has %d lines, want a header and 50 rows", n)
	}
	if _, err := Load(filepath.Join(dir, results.ScenarioFile), nil, 0); err != nil {
		t.Errorf("the effective scenario does not load: %v", err)
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
