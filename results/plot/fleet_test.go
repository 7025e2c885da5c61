package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"handoff/results"
)

// scheduledFleet is a fleet.csv of a decode pool scaled 1 → 3 → 2 beside
// a fixed prefill pool.
const scheduledFleet = "time_s,pool,ready,requested,draining\n0.000000000,prefill,2,0,0\n0.000000000,decode,1,0,0\n" +
	"1.000000000,decode,1,2,0\n1.500000000,decode,3,0,0\n3.000000000,decode,2,0,1\n5.934307324,decode,2,0,0\n"

// TestDrawDirFleet: a run directory with fleet.csv gets fleet.png and
// .svg, drawn; one without gets neither (TestDrawDir).
func TestDrawDirFleet(t *testing.T) {
	dir := copyFixture(t, "run")
	if err := os.WriteFile(filepath.Join(dir, results.FleetFile), []byte(scheduledFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DrawDir(dir, saveFiles(dir)); err != nil {
		t.Fatal(err)
	}
	if got := plotFiles(t, dir); !slices.Contains(got, "fleet.png") || !slices.Contains(got, "fleet.svg") {
		t.Fatalf("wrote %v, want fleet.png and fleet.svg", got)
	}
	png, err := os.ReadFile(filepath.Join(dir, plotsDir, "fleet.png"))
	if err != nil || len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("fleet.png: %d bytes (%v), want a drawn PNG", len(png), err)
	}
}

// TestFleetSteps: each pool's counts hold from their change point to the
// run's end, ready solid and asked for (ready + requested) dashed.
func TestFleetSteps(t *testing.T) {
	ready, asked := fleetXYs([]results.CountPoint{{AtNs: 0, Ready: 1}, {AtNs: 1e9, Ready: 1, Requested: 2}, {AtNs: 2e9, Ready: 3}}, 10)
	if len(ready) != 4 || ready[3].X != 10 || ready[3].Y != 3 || asked[1].Y != 3 || ready[1].Y != 1 {
		t.Errorf("ready %v, asked %v", ready, asked)
	}
	var b bytes.Buffer
	if err := Fleet(&b, SVG, []results.PoolCounts{{Pool: "d", Points: []results.CountPoint{{Ready: 2}}}}, 5); err != nil ||
		!bytes.Contains(b.Bytes(), []byte("d: ready")) {
		t.Errorf("SVG of one pool: %v, legend missing", err)
	}
}
