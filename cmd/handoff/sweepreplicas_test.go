package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMeanInterval: Student's t interval by hand (t(0.975, 2) = 4.302653).
func TestMeanInterval(t *testing.T) {
	mean, lo, hi := meanInterval([]float64{1, 2, 3})
	half := 4.302653 / math.Sqrt(3)
	if mean != 2 || math.Abs(lo-(2-half)) > 1e-5 || math.Abs(hi-(2+half)) > 1e-5 {
		t.Errorf("mean %g, interval [%g, %g]; want 2, [%g, %g]", mean, lo, hi, 2-half, 2+half)
	}
	if mean, lo, hi := meanInterval([]float64{5}); mean != 5 || lo != 5 || hi != 5 {
		t.Errorf("one replica: %g [%g, %g]", mean, lo, hi)
	}
}

// TestSweepWritesReplicas: a sweep with replicas writes one replicas.csv
// row per configuration, with its replica count; one without writes none.
func TestSweepWritesReplicas(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "sweep", quickstart, "-o", dir, "--vary", "pools.decode.count=1,2",
		"--set", "sweep.replicas=2", "--set", "workload.synthetic.requests=60")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "replicas.csv")))), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "pools.decode.count,replicas,attainment_mean,") ||
		!strings.HasPrefix(lines[1], "1,2,") || !strings.HasPrefix(lines[2], "2,2,") {
		t.Errorf("replicas.csv:\n%s", strings.Join(lines, "\n"))
	}
	other := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runCLI(t, "sweep", quickstart, "-o", other, "--vary", "pools.decode.count=1,2",
		"--set", "workload.synthetic.requests=60"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(other, "replicas.csv")); err == nil {
		t.Error("a sweep without replicas wrote replicas.csv")
	}
}
