package sim

import (
	"testing"

	"handoff/models/autoscale"
)

// watcher keeps 1 instance and records what it was shown.
type watcher struct{ seen []autoscale.Observation }

func (w *watcher) Desired(o *autoscale.Observation) int {
	w.seen = append(w.seen, *o)
	return 1
}

// Every decision sees the traffic of its interval, with no staleness too
// (the scrape and the decision fall at the same instant), and the pool's
// bounds; under staleness the first scrape's window is shorter than an
// interval and says so.
func TestDecisionSeesItsScrape(t *testing.T) {
	for _, stalenessNs := range []int64{0, 4e6} {
		w := &watcher{}
		cfg := fleetConfig(t, w, 0, 0, steadyRequests(60, 1e6, 20, 4))
		cfg.Scaling[0].StalenessNs = stalenessNs
		mustRun(t, cfg)
		if len(w.seen) < 4 {
			t.Fatalf("staleness %d ns: %d decisions", stalenessNs, len(w.seen))
		}
		for k, o := range w.seen[:4] {
			wantIntervalNs := int64(10e6)
			if k == 0 {
				wantIntervalNs -= stalenessNs
			}
			if o.Requests == 0 || o.FinishedCount == 0 || o.MinInstances != 1 || o.MaxInstances != 3 ||
				o.IntervalNs != wantIntervalNs || o.NowNs != int64(k+1)*10e6 {
				t.Errorf("staleness %d ns, decision %d saw %+v", stalenessNs, k, o)
			}
		}
	}
}
