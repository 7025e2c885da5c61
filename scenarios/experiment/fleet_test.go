package experiment

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/results"
	"handoff/results/rundir"
)

// scheduledDecode is the quickstart's decode pool on a schedule: one
// decoder at first, three from 1 s on (ready after 500 ms of
// provisioning), two from 3 s on.
const scheduledDecode = `  - name: decode
    role: decode
    count: 1
    hardware: h100-sxm
    tp: 1
    preemption: recompute
    autoscale: {policy: schedule, min: 1, max: 3, interval: 1s, provisioning: 500ms,
                schedule: [{at: 1s, count: 3}, {at: 3s, count: 2}]}
`

// loadScheduled writes the quickstart with scheduledDecode and loads it.
func loadScheduled(t *testing.T) *Finished {
	t.Helper()
	b, err := os.ReadFile("../quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old := "  - name: decode\n    role: decode\n    count: 2\n    hardware: h100-sxm\n    tp: 1\n    preemption: recompute\n"
	doc := strings.Replace(string(b), old, scheduledDecode, 1)
	doc = strings.Replace(doc, "requests: 2000", "requests: 100", 1)
	if !strings.Contains(doc, "policy: schedule") {
		t.Fatal("the quickstart's decode pool is not where the test expects it")
	}
	path := filepath.Join(t.TempDir(), "scheduled.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum, res, err := Run(l, nil, WithTimeline, KeepRecords)
	if err != nil {
		t.Fatal(err)
	}
	return &Finished{Loaded: l, Summary: sum, Result: res}
}

// TestWriteRunDirFleet: a run whose pool follows a schedule writes
// fleet.csv, which reads back as the run's change points: the scheduled
// counts, requested when the schedule asks and ready after provisioning.
func TestWriteRunDirFleet(t *testing.T) {
	run := loadScheduled(t)
	dir := t.TempDir()
	if err := WriteRunDir(dir, run); err != nil {
		t.Fatal(err)
	}
	pools, err := rundir.ReadFleet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 2 || pools[1].Pool != "decode" {
		t.Fatalf("fleet.csv pools %v, want prefill and decode", pools)
	}
	for k, p := range run.Result.Fleet {
		var want []results.CountPoint
		for _, pt := range p.Points {
			want = append(want, results.CountPoint{AtNs: pt.AtNs, Ready: pt.Ready, Requested: pt.Requested, Draining: pt.Draining})
		}
		if !slices.Equal(pools[k].Points, want) {
			t.Errorf("pool %s read back %v, want %v", p.Pool, pools[k].Points, want)
		}
	}
	pts := pools[1].Points
	head := []results.CountPoint{{AtNs: 0, Ready: 1}, {AtNs: 1e9, Ready: 1, Requested: 2}, {AtNs: 1.5e9, Ready: 3},
		{AtNs: 3e9, Ready: 2, Draining: 1}}
	if len(pts) < len(head) || !slices.Equal(pts[:len(head)], head) {
		t.Errorf("decode points %v, want them to begin %v", pts, head)
	}
	if last := pts[len(pts)-1]; last.Ready != 2 || last.Draining != 0 {
		t.Errorf("decode ends at %+v, want 2 ready and none draining", last)
	}
}

// TestWriteRunDirFixedFleetNoFleetCSV: a fixed fleet writes no fleet.csv.
func TestWriteRunDirFixedFleetNoFleetCSV(t *testing.T) {
	l := load(t)
	sum, res, err := Run(l, nil, WithTimeline, KeepRecords)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteRunDir(dir, &Finished{Loaded: l, Summary: sum, Result: res}); err != nil {
		t.Fatal(err)
	}
	if rundir.Has(dir, results.FleetFile) {
		t.Error("a fixed fleet wrote fleet.csv")
	}
}
