package experiment

import (
	"bytes"
	"testing"

	"handoff/sim"
)

// TestWriteTimelineCSV: one row per sample with the instance's limit and
// pool, and the tier columns only when asked.
func TestWriteTimelineCSV(t *testing.T) {
	tls := []sim.Timeline{{Instance: "d-0", Pool: "d", MaxSeqs: 8, IntervalNs: 500e6,
		Samples: []sim.Sample{{AtNs: 500e6, KVUsed: 0.25, Running: 3, Waiting: 1, Preemptions: 2, TierUsed: [3]float32{0.5, 0, 0}}}}}
	for _, c := range []struct {
		tiers bool
		want  string
	}{
		{false, "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool\nsample,d-0,0.500,0.2500,3,1,2,8,d\n"},
		{true, "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,host_used,disk_used,store_used\n" +
			"sample,d-0,0.500,0.2500,3,1,2,8,d,0.5000,0.0000,0.0000\n"},
	} {
		var b bytes.Buffer
		if err := WriteTimelineCSV(&b, tls, c.tiers); err != nil || b.String() != c.want {
			t.Errorf("tiers %v: %v\n%s\nwant\n%s", c.tiers, err, b.String(), c.want)
		}
	}
}
