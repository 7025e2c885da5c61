package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"handoff/results"
)

// TestLowLoadRequestsNeverOverlap: requests of prompt 100 and output 10
// arriving every 100 µs on one colocated instance each finish in
// 2000 + 9·1010 = 11090 ns, long before the next arrives, so every record
// matches the single-request closed form and throughput is the arrival rate.
func TestLowLoadRequestsNeverOverlap(t *testing.T) {
	const n, gapNs = 500, 100_000
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{ArrivalNs: int64(i) * gapNs, PromptTokens: 100, OutputTokens: 10}
	}
	res := mustRun(t, colocatedConfig(t, 4096, reqs))
	for _, r := range res.Records {
		if r.FirstTokenNs-r.ArrivalNs != 2000 || r.FinishNs-r.ArrivalNs != 11090 {
			t.Fatalf("request %d: TTFT %d ns, E2E %d ns; want 2000 and 11090",
				r.ID, r.FirstTokenNs-r.ArrivalNs, r.FinishNs-r.ArrivalNs)
		}
	}
	// Completions per second over the run equal arrivals per second up to
	// the last request's service time: 500 / (499·100 µs + 11.09 µs).
	wantPerS := float64(n) / (float64((n-1)*gapNs+11090) / 1e9)
	if got := float64(n) / (float64(res.SimTimeNs) / 1e9); math.Abs(got-wantPerS) > 1e-9*wantPerS {
		t.Errorf("throughput %.3f/s, want %.3f/s", got, wantPerS)
	}
	if busy := res.Instances[0].BusyNs; busy != n*11090 {
		t.Errorf("busy %d ns, want %d", busy, n*11090)
	}
}

// TestStableLoadLittlesLaw drives a Poisson load at about a third of one
// colocated instance's capacity and checks the records against the event
// loop's own state: the time integral of requests outstanding equals the sum
// of E2E exactly (Little's law, L = λW, with each side measured separately);
// throughput matches the arrival rate; no TTFT beats the request's own
// prefill step and no decode beats back-to-back single-token steps.
func TestStableLoadLittlesLaw(t *testing.T) {
	const n, meanGapNs = 3000, 40_000 // 25k/s offered; alone a request takes ≈ 14 µs
	rng := rand.New(rand.NewPCG(4, 2))
	reqs := make([]Request, n)
	atNs := int64(0)
	for i := range reqs {
		atNs += int64(rng.ExpFloat64() * meanGapNs)
		reqs[i] = Request{ArrivalNs: atNs, PromptTokens: 50 + rng.IntN(200), OutputTokens: 1 + rng.IntN(20)}
	}
	var areaNs float64 // ∫ requests in the system dt
	lastNs := int64(0)
	integrate := func(c *cluster, atNs int64) {
		areaNs += float64(c.replicas[0].outstanding) * float64(atNs-lastNs)
		lastNs = atNs
	}
	c, err := drive(t, colocatedConfig(t, 512, reqs), 0, integrate)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, c.recs.all, n)
	var sumE2ENs float64
	for _, r := range c.recs.all {
		if r.Status != results.Completed {
			t.Fatalf("request %d: %+v", r.ID, r)
		}
		sumE2ENs += float64(r.FinishNs - r.ArrivalNs)
		if ttft, floor := r.FirstTokenNs-r.ArrivalNs, int64(cfA+cfB*int(r.PromptTokens)); ttft < floor {
			t.Errorf("request %d: TTFT %d ns below its prefill step %d ns", r.ID, ttft, floor)
		}
		if dec, floor := r.FinishNs-r.FirstTokenNs, int64(r.OutputTokens-1)*cfDecodeNs; dec < floor {
			t.Errorf("request %d: decode %d ns below %d back-to-back steps", r.ID, dec, r.OutputTokens-1)
		}
	}
	if areaNs != sumE2ENs {
		t.Errorf("∫N dt = %.0f ns·req, Σ E2E = %.0f ns: records disagree with the loop", areaNs, sumE2ENs)
	}
	spanS := float64(c.nowNs-c.record(0).ArrivalNs) / 1e9
	offered := float64(n-1) / (float64(reqs[n-1].ArrivalNs-reqs[0].ArrivalNs) / 1e9)
	if got := float64(n) / spanS; math.Abs(got-offered) > 0.01*offered {
		t.Errorf("throughput %.0f/s, offered %.0f/s: a stable system serves what arrives", got, offered)
	}
	if l := areaNs / (spanS * 1e9); l <= 0 || l >= 1 {
		t.Errorf("mean requests in system %.3f, want in (0, 1) at a third of capacity", l)
	}
}
