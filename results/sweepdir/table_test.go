package sweepdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
)

// TestReadResults writes a results.csv as WriteResults does and reads it
// back: the header split where the figures start, each row's values and
// figures and its line; an older table's missing figure is -1.
func TestReadResults(t *testing.T) {
	dir := t.TempDir()
	columns := []string{"pools.decode.count", SeedPath}
	points := []Point{
		{Index: 0, ID: "0000-aa", Overrides: []Override{{Path: columns[0], Value: "1"}, {Path: SeedPath, Value: "7"}}},
		{Index: 1, ID: "0001-bb", Overrides: []Override{{Path: columns[0], Value: "2"}, {Path: SeedPath, Value: "8"}}},
	}
	var b strings.Builder
	err := writeCSV(&b, columns, points, func(p Point) (results.Summary, error) {
		return results.Summary{SLO: results.SLOSummary{Attainment: float64(p.Index) / 2}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SweepResultsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.Varied, columns) || !slices.Equal(tab.Figures, Header(columns)[3:]) || len(tab.Rows) != 2 {
		t.Fatalf("varied %v, figures %v, %d rows", tab.Varied, tab.Figures, len(tab.Rows))
	}
	r, att := tab.Rows[1], tab.Figure("attainment")
	if r.Line != 3 || r.ID != "0001-bb" || !slices.Equal(r.Values, []string{"2", "8"}) || att < 0 || r.Figures[att] != "0.5" {
		t.Errorf("row %+v, attainment at %d", r, att)
	}
	if tab.Figure("no_such_figure") != -1 {
		t.Error("a missing figure has a position")
	}
}

// TestReadResultsEmpty: an empty results.csv is an error that says so,
// naming the file (the report and plot both show it).
func TestReadResultsEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, results.SweepResultsFile)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadResults(dir); err == nil || err.Error() != path+": empty file, want a header line" {
		t.Errorf("ReadResults of an empty file: %v", err)
	}
}

// TestReadResultsCut: a results.csv cut while written is refused naming
// the file, whether the cut falls inside the header (which would
// otherwise read as a table with no points) or inside the last row's
// last field (which would read as a shorter number).
func TestReadResultsCut(t *testing.T) {
	columns := []string{"pools.decode.count"}
	points := []Point{{Index: 0, ID: "0000-aa", Overrides: []Override{{Path: columns[0], Value: "1"}}}}
	var b strings.Builder
	err := writeCSV(&b, columns, points, func(Point) (results.Summary, error) {
		return results.Summary{SimTimeS: 12.5}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	full := b.String()
	header := strings.Index(full, "\n")
	for name, text := range map[string]string{
		"inside the header":       full[:header-5],
		"at the header's end":     full[:header],
		"inside the last field":   full[:len(full)-2],
		"at the last field's end": full[:len(full)-1],
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, results.SweepResultsFile)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadResults(dir)
		if err == nil || !strings.HasPrefix(err.Error(), path+": cut short") {
			t.Errorf("%s: ReadResults = %v, want an error naming %s", name, err, path)
		}
	}
}
