package plot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPoolSamples: per instant, the least, median and most used
// instance's KV share and the pool's summed sequences, by hand.
func TestPoolSamples(t *testing.T) {
	mk := func(kv ...float64) InstanceTimeline {
		var tl InstanceTimeline
		for k, v := range kv {
			tl.Samples = append(tl.Samples, Sample{TimeS: float64(k), KVUsed: v, Batch: k + 1, Waiting: 2 * k})
		}
		return tl
	}
	lo, mid, hi, total := poolSamples([]InstanceTimeline{mk(0.1, 0.9), mk(0.5, 0.2), mk(0.3, 0.4, 1)})
	if len(lo) != 2 { // the shortest member's samples
		t.Fatalf("%d samples, want 2", len(lo))
	}
	for k, want := range [][3]float64{{0.1, 0.3, 0.5}, {0.2, 0.4, 0.9}} {
		if got := [3]float64{lo[k].KVUsed, mid[k].KVUsed, hi[k].KVUsed}; got != want {
			t.Errorf("instant %d: KV least/median/most %v, want %v", k, got, want)
		}
	}
	if total[1].Batch != 6 || total[1].Waiting != 6 {
		t.Errorf("instant 1: running %d, waiting %d; want 6 and 6", total[1].Batch, total[1].Waiting)
	}
}

// TestTimelineFiguresArePoolsFirst: a run's timelines are one figure per
// pool, then only the instances that preempted, the most first.
func TestTimelineFiguresArePoolsFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "timeline.csv")
	csv := "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool\n" +
		"sample,p-0,0.000,0.1,1,0,0,8,p\nsample,d-0,0.000,0.5,2,1,0,8,d\nsample,d-1,0.000,0.9,3,4,2,8,d\n" +
		"sample,p-0,0.500,0.2,1,0,0,8,p\nsample,d-0,0.500,0.5,2,1,1,8,d\nsample,d-1,0.500,1.0,3,4,3,8,d\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	figs, err := timelineFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.name)
	}
	want := []string{"timeline_pool_p", "timeline_pool_d", "timeline_d-1", "timeline_d-0"}
	if len(names) != len(want) {
		t.Fatalf("figures %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("figures %v, want %v", names, want)
			break
		}
	}
}
