package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"handoff/results"
)

// loopRequests draws n requests whose arrival times run backwards: a
// closed loop ignores them, an open loop would refuse the source.
func loopRequests(seed uint64, n int) []Request {
	rng := rand.New(rand.NewPCG(seed, 7))
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{ArrivalNs: int64(n-i) * 1e9, PromptTokens: 20 + rng.IntN(200), OutputTokens: 1 + rng.IntN(30)}
	}
	return reqs
}

// inFlight returns the requests in flight — arrived, not yet ended as
// their client sees it, [ArrivalNs, FinishNs) — over each interval
// between consecutive arrival or end times: counts[k] holds on
// [times[k], times[k+1]).
func inFlight(recs []results.Record) (times []int64, counts []int) {
	type edge struct {
		at int64
		d  int
	}
	var edges []edge
	for _, r := range recs {
		edges = append(edges, edge{r.ArrivalNs, 1}, edge{r.FinishNs, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int { return int(a.at - b.at) })
	n := 0
	for k, e := range edges {
		n += e.d
		if k+1 == len(edges) || edges[k+1].at != e.at {
			times, counts = append(times, e.at), append(counts, n)
		}
	}
	return times, counts
}

// checkClosedLoop asserts a closed loop of n users on its records: never
// more than n in flight, exactly n from the first arrival to the last,
// hence Little's law on that span (∫ in flight dt = n · span) exactly.
func checkClosedLoop(t *testing.T, recs []results.Record, n int) {
	t.Helper()
	var lastArrival int64
	for _, r := range recs {
		lastArrival = max(lastArrival, r.ArrivalNs)
	}
	times, counts := inFlight(recs)
	var area float64
	for k, at := range times {
		if counts[k] > n {
			t.Fatalf("%d requests in flight at %d ns, more than %d users", counts[k], at, n)
		}
		if at < lastArrival && counts[k] != n {
			t.Fatalf("%d requests in flight at %d ns before the last send at %d ns, want %d", counts[k], at, lastArrival, n)
		}
		if at < lastArrival {
			area += float64(counts[k]) * float64(min(times[k+1], lastArrival)-at)
		}
	}
	if l := area / float64(lastArrival); math.Abs(l-float64(n)) > 1e-9 {
		t.Errorf("mean in flight over the steady part %.6f, want %d", l, n)
	}
}

// TestClosedLoopKeepsNInFlight runs closed loops of several sizes, on a
// colocated and a disaggregated cluster, with emission delays and a front
// end (so ends are seen after the engine's last step), and checks the
// in-flight count exactly and Little's law over the whole run: Σ E2E /
// makespan is a little under n, the drain at the end being short.
func TestClosedLoopKeepsNInFlight(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		for _, pd := range []bool{false, true} {
			reqs := loopRequests(uint64(n), 300)
			cfg := colocatedConfig(t, 4096, reqs)
			if pd {
				cfg = pdConfig(t, reqs)
			}
			for i := range cfg.Instances {
				cfg.Instances[i].FirstEmitNs, cfg.Instances[i].FinalEmitNs = 300, 700
			}
			cfg.Frontend = Frontend{LatencyNs: 400}
			cfg.Client = Client{Concurrency: n}
			res := mustRun(t, cfg)
			checkConservation(t, res.Records, len(reqs))
			checkClosedLoop(t, res.Records, n)
			var sumE2E, lastFinish float64
			for i, r := range res.Records {
				if r.Status != results.Completed || r.PromptTokens != int32(reqs[i].PromptTokens) {
					t.Fatalf("n=%d pd=%v: request %d %+v, want completed with the source's %d-th lengths", n, pd, i, r, i)
				}
				sumE2E += float64(r.FinishNs - r.ArrivalNs)
				lastFinish = max(lastFinish, float64(r.FinishNs))
			}
			if l := sumE2E / lastFinish; l > float64(n) || l < 0.95*float64(n) {
				t.Errorf("n=%d pd=%v: Σ E2E / makespan = %.3f, want just under %d", n, pd, l, n)
			}
		}
	}
}

// TestClosedLoopThinkTime checks that each send comes exactly the think
// time after an end: with one user, request i+1 arrives think after
// request i ends; with three, the sends after the first three are the
// first ends shifted by think.
func TestClosedLoopThinkTime(t *testing.T) {
	const think = 12_345
	for _, n := range []int{1, 3} {
		cfg := colocatedConfig(t, 4096, loopRequests(5, 60))
		for i := range cfg.Instances {
			cfg.Instances[i].FinalEmitNs = 900
		}
		cfg.Client = Client{Concurrency: n, ThinkNs: think}
		recs := mustRun(t, cfg).Records
		checkConservation(t, recs, 60)
		var arrivals, ends []int64
		for i, r := range recs {
			if i < n && r.ArrivalNs != 0 {
				t.Fatalf("n=%d: request %d arrived at %d ns, want 0", n, i, r.ArrivalNs)
			}
			if n == 1 && i > 0 && r.ArrivalNs != recs[i-1].FinishNs+think {
				t.Fatalf("request %d arrived at %d ns, want %d + %d", i, r.ArrivalNs, recs[i-1].FinishNs, think)
			}
			arrivals, ends = append(arrivals, r.ArrivalNs), append(ends, r.FinishNs+think)
		}
		slices.Sort(arrivals)
		slices.Sort(ends)
		if !slices.Equal(arrivals[n:], ends[:len(ends)-n]) {
			t.Errorf("n=%d: sends %v\nare not ends + think %v", n, arrivals[n:], ends[:len(ends)-n])
		}
	}
}

// TestClosedLoopEnds: requests that end in every way — dropped at arrival
// (too long for the instance), abandoned by the client's timeouts,
// completed — each end once and each frees its user; Requests caps the
// sends; and a second run is identical.
func TestClosedLoopEnds(t *testing.T) {
	reqs := loopRequests(9, 200)
	for i := range reqs {
		switch {
		case i%17 == 0:
			reqs[i].PromptTokens = 5000 // more than the pool's 1600 tokens: dropped
		case i%13 == 0:
			reqs[i].OutputTokens = 150 // ≥ 150 decode steps of 1 µs: past the 60 µs timeout
		}
	}
	for _, limit := range []int64{0, 120, 500} {
		run := func() *Result {
			cfg := colocatedConfig(t, 4096, reqs)
			cfg.Client = Client{Concurrency: 6, ThinkNs: 1000, Requests: limit, TimeoutNs: 60_000, FirstTokenTimeoutNs: 20_000}
			return mustRun(t, cfg)
		}
		res := run()
		want := len(reqs)
		if limit > 0 {
			want = min(want, int(limit))
		}
		checkConservation(t, res.Records, want)
		var counts [results.Abandoned + 1]int
		for _, r := range res.Records {
			counts[r.Status]++
		}
		if counts[results.Dropped] == 0 || counts[results.Abandoned] == 0 || counts[results.Completed] == 0 {
			t.Errorf("limit %d: statuses %v: want drops, abandons and completions", limit, counts)
		}
		checkAtMost(t, res.Records, 6)
		if d := sameResult(res, run()); d != "" {
			t.Errorf("limit %d: two runs differ: %s", limit, d)
		}
	}
}

// checkAtMost asserts that no more than n requests are ever in flight.
func checkAtMost(t testing.TB, recs []results.Record, n int) {
	t.Helper()
	times, counts := inFlight(recs)
	for k, c := range counts {
		if c > n {
			t.Fatalf("%d requests in flight at %d ns, more than %d users", c, times[k], n)
		}
	}
}

// TestClosedLoopSourceErrors: a bad request from the source ends a closed
// loop's run with the source's error, as in an open loop.
func TestClosedLoopSourceErrors(t *testing.T) {
	reqs := loopRequests(3, 10)
	reqs[6].OutputTokens = 0
	cfg := colocatedConfig(t, 4096, reqs)
	cfg.Client = Client{Concurrency: 2}
	if _, err := Run(cfg); err == nil {
		t.Fatal("a request with no output tokens ran")
	}
}
