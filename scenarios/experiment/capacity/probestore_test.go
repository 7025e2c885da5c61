package capacity

import "testing"

// TestRecordDifferenceSets: a probe saved with other overrides says which,
// as comma lists.
func TestRecordDifferenceSets(t *testing.T) {
	rec := &probeRecord{Version: probeLayoutVersion, Sets: []string{"workload.rate_scale=2", "pools.decode.count=3"}}
	want := &probeRecord{Version: probeLayoutVersion, Sets: []string{"workload.rate_scale=2"}}
	got := recordDifference(rec, want)
	if w := "probe " + probeID(want.Sets) + " is of workload.rate_scale=2, pools.decode.count=3, not workload.rate_scale=2"; got != w {
		t.Errorf("got %q, want %q", got, w)
	}
	rec.Sets = nil
	if got, w := recordDifference(rec, want), "probe "+probeID(want.Sets)+" is of none, not workload.rate_scale=2"; got != w {
		t.Errorf("got %q, want %q", got, w)
	}
}
