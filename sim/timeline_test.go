package sim

import (
	"fmt"
	"testing"
)

// TestTimelineSamplesAFixedGridIdleIncluded: one colocated instance serves
// a request arriving at 0 (prompt 100: a 2,000 ns prefill step, then four
// 1,010 ns decode steps, done at 6,040 ns) and another at 20,000 ns (done
// at 26,040 ns). On a 1,000 ns grid the instance runs one sequence at
// 0..6,000 and 20,000..26,000 ns and none otherwise: idle shows as idle,
// and the grid runs to the first point past the run's end.
func TestTimelineSamplesAFixedGridIdleIncluded(t *testing.T) {
	cfg := colocatedConfig(t, 4096, []Request{
		{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 5},
		{ArrivalNs: 20_000, PromptTokens: 100, OutputTokens: 5},
	})
	cfg.TimelineIntervalNs, cfg.TimelineSamples = 1000, 1000
	res := mustRun(t, cfg)
	tl := res.Timelines[0]
	if want := (res.SimTimeNs+999)/1000 + 1; int64(len(tl.Samples)) != want || tl.IntervalNs != 1000 {
		t.Fatalf("%d samples every %d ns, want %d every 1000 ns", len(tl.Samples), tl.IntervalNs, want)
	}
	for k, s := range tl.Samples {
		want := int32(0)
		if s.AtNs <= 6000 || s.AtNs >= 20_000 && s.AtNs <= 26_000 {
			want = 1
		}
		if s.AtNs != int64(k)*1000 || s.Running != want || (want == 0) != (s.KVUsed == 0) {
			t.Errorf("sample %d: %+v, want running %d at %d ns", k, s, want, k*1000)
		}
	}
}

// TestTimelineCoarsensInsteadOfStopping: with room for 8 samples a run of
// 40 intervals is sampled at a coarser multiple of the interval, from 0 to
// its end, and no preemption is lost in coarsening.
func TestTimelineCoarsensInsteadOfStopping(t *testing.T) {
	for _, samples := range []int{8, 3, 2, 1} {
		t.Run(fmt.Sprintf("samples=%d", samples), func(t *testing.T) { checkCoarsening(t, samples) })
	}
}

// checkCoarsening runs TestTimelineCoarsensInsteadOfStopping's load with
// a budget of samples; a budget under 3 (found by the swarm) coarsened
// away the sample just taken every time, until the interval overflowed.
func checkCoarsening(t *testing.T, samples int) {
	var reqs []Request
	for k := range 6 {
		reqs = append(reqs, Request{ArrivalNs: int64(k) * 2000, PromptTokens: 60, OutputTokens: 60})
	}
	cfg := colocatedConfig(t, 4096, reqs)
	cfg.Instances[0].Engine.NumBlocks = 12 // 192 tokens for 720: preemptions
	cfg.TimelineIntervalNs, cfg.TimelineSamples = 1000, samples
	res := mustRun(t, cfg)
	tl := res.Timelines[0]
	if n := max(samples, 3); len(tl.Samples) > n || tl.IntervalNs <= 1000 {
		t.Fatalf("%d samples every %d ns: want at most %d, coarser than 1000 ns", len(tl.Samples), tl.IntervalNs, n)
	}
	var preemptions int64
	for k, s := range tl.Samples {
		if s.AtNs != int64(k)*tl.IntervalNs {
			t.Errorf("sample %d at %d ns, want %d", k, s.AtNs, int64(k)*tl.IntervalNs)
		}
		preemptions += int64(s.Preemptions)
	}
	last := tl.Samples[len(tl.Samples)-1].AtNs
	if last < res.SimTimeNs || last-res.SimTimeNs >= tl.IntervalNs {
		t.Errorf("the last sample at %d ns leaves the run's end at %d ns uncovered", last, res.SimTimeNs)
	}
	if st := res.Instances[0].Stats; preemptions != st.Preemptions || st.Preemptions == 0 {
		t.Errorf("samples count %d preemptions, the instance %d (want equal, > 0)", preemptions, st.Preemptions)
	}
}
