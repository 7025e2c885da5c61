package experiment

import (
	"bytes"
	"testing"

	"handoff/sim"
)

// TestWriteTimelineCSV: one row per sample with the instance's limit,
// pool and lock-up kind (empty when none), and the tier columns only when
// asked.
func TestWriteTimelineCSV(t *testing.T) {
	tls := []sim.Timeline{{Instance: "d-0", Pool: "d", MaxSeqs: 8, IntervalNs: 500e6,
		Samples: []sim.Sample{{AtNs: 500e6, KVUsed: 0.25, Running: 3, Waiting: 1, Preemptions: 2, TierUsed: [3]float32{0.5, 0, 0}},
			{AtNs: 1e9, KVUsed: 1, Waiting: 4, Lockup: sim.LockDeadlock}}}}
	for _, c := range []struct {
		tiers bool
		want  string
	}{
		{false, "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,lockup\n" +
			"sample,d-0,0.500,0.2500,3,1,2,8,d,\nsample,d-0,1.000,1.0000,0,4,0,8,d,deadlock\n"},
		{true, "kind,instance,time_s,kv_used,running,waiting,preemptions,max_num_seqs,pool,lockup,host_used,disk_used,store_used\n" +
			"sample,d-0,0.500,0.2500,3,1,2,8,d,,0.5000,0.0000,0.0000\nsample,d-0,1.000,1.0000,0,4,0,8,d,deadlock,0.0000,0.0000,0.0000\n"},
	} {
		var b bytes.Buffer
		if err := WriteTimelineCSV(&b, tls, c.tiers); err != nil || b.String() != c.want {
			t.Errorf("tiers %v: %v\n%s\nwant\n%s", c.tiers, err, b.String(), c.want)
		}
	}
}
