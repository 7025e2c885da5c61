package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

const ms = int64(1e6) // ns per millisecond

// handRecords are six requests whose summary is worked out by hand in
// TestSummarizeByHand. Times in ms:
//
//	id arrival first finish out status   TTFT TPOT E2E  SLO(200ms, 50ms)
//	0     0     100   1100   21 completed 100  50  1100  good (TPOT = limit)
//	1  1000    1300   1300    1 completed 300   -   300  TTFT too slow
//	2  2000    2050   2050    1 completed  50   -    50  good (no TPOT)
//	3  3000       0   3500    0 rejected
//	4  4000       0   4000    0 dropped
//	5  2500    2600   4600   11 completed 100 200  2100  TPOT too slow
func handRecords() []Record {
	rec := func(id, arr, first, fin int64, prompt, out, cached int32, st Status, reason string) Record {
		return Record{ID: id, ArrivalNs: arr * ms, FirstTokenNs: first * ms, FinishNs: fin * ms,
			PromptTokens: prompt, OutputTokens: out, CachedTokens: cached,
			PrefillInstance: 0, DecodeInstance: 1, Status: st, Reason: reason}
	}
	rs := []Record{
		rec(0, 0, 100, 1100, 100, 21, 50, Completed, ""),
		rec(1, 1000, 1300, 1300, 200, 1, 0, Completed, ""),
		rec(2, 2000, 2050, 2050, 100, 1, 50, Completed, ""),
		rec(3, 3000, 0, 3500, 300, 0, 0, Rejected, "low cache hit"),
		rec(4, 4000, 0, 4000, 5000, 0, 0, Dropped, "too long"),
		rec(5, 2500, 2600, 4600, 100, 11, 0, Completed, ""),
	}
	rs[3].Preemptions = 1
	rs[4].PrefillInstance, rs[4].DecodeInstance = -1, -1
	rs[5].Preemptions = 2
	rs[5].Rejections, rs[5].WastedTokens = 1, 4
	// Time components in ms: frontend, router, prefill queue, prefill compute,
	// onboard, transfer, decode queue first | decode compute, decode queue,
	// reprefill, swap, rejection. Each row sums to TTFT | E2E − TTFT.
	times := map[int][NumTimes]int64{
		0: {0, 0, 20, 50, 0, 10, 20, 1000},
		1: {0, 5, 200, 75, 0, 10, 10},
		2: {0, 0, 0, 30, 0, 10, 10},
		5: {0, 0, 0, 60, 0, 20, 20, 1200, 100, 300, 0, 400},
	}
	for i, ts := range times {
		for k := range ts {
			rs[i].Time[k] = ts[k] * ms
		}
	}
	return rs
}

func handInfo() RunInfo {
	return RunInfo{Scenario: "hand", Seed: 7, GPUs: 4, Device: "GPU", SimTimeNs: 5000 * ms, WallTimeS: 0.25,
		Events: 123, SLO: SLO{TTFTNs: 200 * ms, TPOTNs: 50 * ms, Attainment: 0.9},
		Instances: []InstanceInfo{
			{Name: "prefill-0", Pool: "prefill", Role: RolePrefill, Owner: "acme", GPUs: 2,
				BusyNs: 4000 * ms, PrefillBusyNs: 4000 * ms, Lockups: 1, LockupNs: 400 * ms,
				LockSpells: [NumLockKinds]int{LockPinned: 1}, LockNs: [NumLockKinds]int64{LockPinned: 400 * ms}},
			{Name: "decode-0", Pool: "decode", Role: RoleDecode, GPUs: 2, BusyNs: 4000 * ms, PrefillBusyNs: 500 * ms,
				Preemptions: 3, ReprefillTokens: 1200, Cascades: 1, LongestCascade: 2, CascadeNs: 250 * ms,
				Lockups: 1, LockupNs: 750 * ms, LockSpells: [NumLockKinds]int{LockPreemptionLoop: 1},
				LockNs: [NumLockKinds]int64{LockPreemptionLoop: 750 * ms}},
		},
		// While decode-0 looped on its victims, prefill-0 was pinned by
		// the KV it held for it.
		LockupChains: []LockupChain{{Chain: "prefill-0 pinned → decode-0 preemption_loop",
			Instances: []string{"prefill-0", "decode-0"}, Spells: 1, Ns: 400 * ms, FirstNs: 1500 * ms,
			LongestNs: 400 * ms, LongestFromNs: 1500 * ms,
			Example: "prefill-0 pinned since 1.500 s → decode-0 preemption_loop since 1.250 s"}},
	}
}

// handITL holds request 0's 20 gaps of 50 ms and request 5's 10 of 200 ms.
func handITL() *Histogram {
	var h Histogram
	h.AddN(50*ms, 20)
	h.AddN(200*ms, 10)
	return &h
}

func TestSummarizeByHand(t *testing.T) {
	recs := handRecords()
	before := slices.Clone(recs)
	s := Summarize(recs, handITL(), handInfo())
	if !slices.Equal(recs, before) {
		t.Fatal("Summarize modified its input")
	}
	if want := (RequestCounts{Total: 6, Completed: 4, Rejected: 1, Dropped: 1}); s.Requests != want {
		t.Errorf("requests %+v, want %+v", s.Requests, want)
	}
	wantDrop := []ReasonGroup{{Kind: "too long", Count: 1, ExampleRequest: 4, ExampleReason: "too long"}}
	wantReject := []ReasonGroup{{Kind: "low cache hit", Count: 1, ExampleRequest: 3, ExampleReason: "low cache hit"}}
	if !slices.Equal(s.DropReasons, wantDrop) || !slices.Equal(s.RejectReasons, wantReject) {
		t.Errorf("reasons: drop %v reject %v", s.DropReasons, s.RejectReasons)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		// TTFT of completed, sorted: 50 100 100 300 ms; mean 550/4.
		// Type-7: p50 h=1.5 → 100; p90 h=2.7 → 100+0.7·200; p99 h=2.97 → 100+0.97·200.
		{"ttft mean", s.TTFT.Mean, 0.1375}, {"ttft p50", s.TTFT.P50, 0.100},
		{"ttft p90", s.TTFT.P90, 0.240}, {"ttft p99", s.TTFT.P99, 0.294}, {"ttft max", s.TTFT.Max, 0.300},
		// TPOT: 1000/20 = 50 and 2000/10 = 200 ms (1-token requests have none).
		{"tpot mean", s.TPOT.Mean, 0.125}, {"tpot p50", s.TPOT.P50, 0.125},
		{"tpot p90", s.TPOT.P90, 0.185}, {"tpot p99", s.TPOT.P99, 0.1985}, {"tpot max", s.TPOT.Max, 0.2},
		// E2E sorted: 50 300 1100 2100 ms; mean 3550/4.
		{"e2e mean", s.E2E.Mean, 0.8875}, {"e2e p50", s.E2E.P50, 0.700},
		{"e2e p90", s.E2E.P90, 1.800}, {"e2e p99", s.E2E.P99, 2.070}, {"e2e max", s.E2E.Max, 2.1},
		// ITL: (20·50 + 10·200)/30 = 100 ms; p50 h=14.5 inside the 50 ms run.
		{"itl mean", s.ITL.Mean, 0.100}, {"itl max", s.ITL.Max, 0.2},
		// Run span 0 → 4600 ms: 4 requests, 21+1+1+11 = 34 tokens.
		{"req/s", s.Throughput.RequestsPerS, 4 / 4.6}, {"tok/s", s.Throughput.OutputTokensPerS, 34 / 4.6},
		// Good: requests 0 and 2, of 6; over the run span, as throughput
		// (vLLM's benchmark duration), not the arrival span (0 → 4000 ms).
		{"attainment", s.SLO.Attainment, 2.0 / 6}, {"request goodput", s.SLO.RequestGoodputRPS, 2 / 4.6},
		{"request goodput/GPU", s.SLO.RequestGoodputRPSPerGPU, 2 / 4.6 / 4},
		// 4 GPUs; interactivity 1 / mean TPOT = 1 / 0.125 s = 8 tok/s per user.
		{"tok/s/GPU", s.Throughput.OutputTokensPerSPerGPU, 34 / 4.6 / 4}, {"interactivity", s.Throughput.InteractivityPerUser, 8},
		{"slo ttft", s.SLO.TTFTS, 0.2}, {"slo tpot", s.SLO.TPOTS, 0.05},
		// Completed prompts 100+200+100+100 = 500, cached 50+50 = 100.
		{"prefix hit", s.PrefixCacheHitRate, 0.2}, {"sim time", s.SimTimeS, 5},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	if s.SLO.RequestGoodputRPS > s.Throughput.RequestsPerS {
		t.Errorf("request goodput %g above throughput %g", s.SLO.RequestGoodputRPS, s.Throughput.RequestsPerS)
	}
	if math.Abs(s.ITL.P50-0.05) > HistogramRelErr*0.05 {
		t.Errorf("itl p50 = %g, want 0.05 within %g", s.ITL.P50, HistogramRelErr)
	}
	if s.SLO.Good != 2 || s.SLO.Met || s.Preemptions != 3 || s.Events != 123 {
		t.Errorf("good %d met %v preemptions %d events %d, want 2 false 3 123",
			s.SLO.Good, s.SLO.Met, s.Preemptions, s.Events)
	}
}

func TestSummarizeNoLimitsAndSpans(t *testing.T) {
	// One request arriving at 1 s: the run span is 1 s → 1.5 s. Zero SLO
	// limits are no limits.
	recs := []Record{{ArrivalNs: 1e9, FirstTokenNs: 1.4e9, FinishNs: 1.5e9, OutputTokens: 3, Status: Completed}}
	s := Summarize(recs, nil, RunInfo{SimTimeNs: 2e9, SLO: SLO{Attainment: 1}})
	if s.SLO.Good != 1 || s.SLO.Attainment != 1 || !s.SLO.Met || s.SLO.RequestGoodputRPS != 2 {
		t.Errorf("slo %+v, want 1 good, attainment 1, met, 2 req/s", s.SLO)
	}
	if s.Throughput.RequestsPerS != 2 || s.ITL != (Stats{}) || s.SLO.RequestGoodputRPSPerGPU != 0 ||
		s.Throughput.OutputTokensPerSPerGPU != 0 || s.Throughput.InteractivityPerUser != 20 { // no GPUs; TPOT 50 ms
		t.Errorf("throughput %+v itl %+v per GPU %g", s.Throughput, s.ITL, s.SLO.RequestGoodputRPSPerGPU)
	}
}

func TestQuantileMethod(t *testing.T) {
	tests := []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{nil, 0.5, 0},
		{[]float64{7}, 0.99, 7},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 1, 4},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},        // h = 1.5
		{[]float64{1, 2, 3, 4}, 1.0 / 3, 2},      // h = 1
		{[]float64{10, 20, 30, 40, 50}, 0.9, 46}, // h = 3.6 → 40 + 0.6·10
		{[]float64{0, 100}, 0.99, 99},
	}
	for _, tc := range tests {
		if got := Quantile(tc.xs, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v, %g) = %g, want %g", tc.xs, tc.q, got, tc.want)
		}
	}
}

// randomRecords returns n completed requests (5% dropped) with plausible
// latencies, for benchmarks.
func randomRecords(n int) []Record {
	r := rand.New(rand.NewPCG(11, 12))
	recs := make([]Record, n)
	for i := range recs {
		arr := int64(i) * 10 * ms
		ttft := int64(r.ExpFloat64() * 2e8)
		out := int32(1 + r.IntN(500))
		fin := arr + ttft + int64(out-1)*int64(2e7+r.IntN(2e7))
		recs[i] = Record{ID: int64(i), ArrivalNs: arr, FirstTokenNs: arr + ttft, FinishNs: fin,
			PromptTokens: int32(100 + r.IntN(4000)), OutputTokens: out, Status: Completed}
		if i%20 == 0 {
			recs[i] = Record{ID: int64(i), ArrivalNs: arr, FinishNs: arr, Status: Dropped, Reason: "too long"}
		}
	}
	return recs
}

func BenchmarkSummarize1M(b *testing.B) {
	recs := randomRecords(1_000_000)
	info := handInfo()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Summarize(recs, nil, info)
	}
}

func TestSelectionMatchesSort(t *testing.T) {
	// statsNs selects order statistics instead of sorting; it must agree
	// exactly with Quantile on sorted data, duplicates and adversarial
	// orders included.
	r := rand.New(rand.NewPCG(9, 10))
	gens := map[string]func(i, n int) float64{
		"uniform":    func(int, int) float64 { return r.Float64() * 1e9 },
		"few values": func(int, int) float64 { return float64(r.IntN(3)) },
		"constant":   func(int, int) float64 { return 42 },
		"ascending":  func(i, _ int) float64 { return float64(i) },
		"descending": func(i, n int) float64 { return float64(n - i) },
		"organ pipe": func(i, n int) float64 { return float64(min(i, n-i)) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 17, 18, 100, 1001, 50000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i, n)
			}
			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			got := statsNs(xs)
			want := Stats{Mean: got.Mean, P50: nsToS(Quantile(sorted, 0.5)), P90: nsToS(Quantile(sorted, 0.9)),
				P99: nsToS(Quantile(sorted, 0.99)), Max: nsToS(sorted[n-1])}
			if got != want {
				t.Errorf("%s n=%d: selection %+v, sort %+v", name, n, got, want)
			}
		}
	}
}
