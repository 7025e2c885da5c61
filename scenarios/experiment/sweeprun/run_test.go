package sweeprun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const quickstart = "../../quickstart.yaml"

// sweepInto runs a small sweep of the quickstart scenario into dir.
func sweepInto(t *testing.T, dir string, sets ...string) *Result {
	t.Helper()
	res, err := Run(context.Background(), Options{Scenario: quickstart, Dir: dir, Jobs: 2, NoPlots: true,
		Sets: append(sets, "workload.synthetic.requests=60"), Vary: []string{"pools.decode.count=1,2"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRunWritesReplicas: a sweep with replicas writes one replicas.csv
// row per configuration, with its replica count; one without writes none.
func TestRunWritesReplicas(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	sweepInto(t, dir, "sweep.replicas=2")
	data, err := os.ReadFile(filepath.Join(dir, "replicas.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "pools.decode.count,replicas,attainment_mean,") ||
		!strings.HasPrefix(lines[1], "1,2,") || !strings.HasPrefix(lines[2], "2,2,") {
		t.Errorf("replicas.csv:\n%s", strings.Join(lines, "\n"))
	}
	other := filepath.Join(t.TempDir(), "out")
	sweepInto(t, other)
	if _, err := os.Stat(filepath.Join(other, "replicas.csv")); err == nil {
		t.Error("a sweep without replicas wrote replicas.csv")
	}
}

// TestRunResumes: a second Run on the same directory runs nothing and
// writes the same results.csv.
func TestRunResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if res := sweepInto(t, dir); res.Ran != 2 {
		t.Fatalf("first run ran %d points, want 2", res.Ran)
	}
	before, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	res := sweepInto(t, dir)
	after, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	if res.Ran != 0 || res.Points != 2 || string(after) != string(before) {
		t.Errorf("resumed: ran %d of %d; results.csv changed: %v", res.Ran, res.Points, string(after) != string(before))
	}
}
