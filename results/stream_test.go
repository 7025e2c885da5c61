package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// logUniformNs draws a latency log-uniformly from 1 ns to maxNs.
func logUniformNs(rng *rand.Rand, maxNs float64) int64 {
	return int64(math.Exp(rng.Float64() * math.Log(maxNs)))
}

// reasonTemplates are reasons with request-specific figures (three
// each), as the simulator writes them, so that kinds group requests.
var reasonTemplates = []string{
	"too long: %d tokens (prompt %d + output %d) exceed the 4096 any instance can hold",
	"low cache hit: %d of %d tokens on decode-1 (%d)",
	"timeout after %d.%d s (%d)",
	"h100 queue full (%d waiting, %d, %d)",
}

// streamRecords draws n records: every status, latencies from 1 ns to
// hours, reasons, instance indices from none to past the last
// InstanceInfo, fail-overs and lower-tier tokens, arrivals over hours.
func streamRecords(rng *rand.Rand, n, instances int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := &recs[i]
		r.ID = int64(rng.IntN(10 * n))
		r.ArrivalNs = rng.Int64N(5 * 3600e9)
		r.Status = Status(rng.IntN(int(Abandoned) + 1))
		if rng.IntN(2) == 0 {
			r.Status = Completed
		}
		r.PromptTokens = int32(rng.IntN(8000))
		r.CachedTokens = int32(rng.IntN(int(r.PromptTokens) + 1))
		r.TierTokens = [3]int32{int32(rng.IntN(100)), int32(rng.IntN(100)), int32(rng.IntN(100))}
		r.PrefillInstance = int32(rng.IntN(instances+3) - 1)
		r.DecodeInstance = int32(rng.IntN(instances+3) - 1)
		r.Preemptions, r.Rejections, r.WastedTokens = int32(rng.IntN(3)), int16(rng.IntN(2)), int32(rng.IntN(50))
		r.ExpiredKVReads, r.Bounces = uint8(rng.IntN(2)*rng.IntN(2)), uint8(rng.IntN(2))
		if rng.IntN(10) == 0 {
			r.Failovers, r.FailoverUs = uint8(1+rng.IntN(3)), int32(logUniformNs(rng, 1e9))
		}
		for k := range r.Time {
			r.Time[k] = logUniformNs(rng, 600e9) - 1
			if k == TEmit && rng.IntN(4) == 0 {
				r.Time[k] = -r.Time[k] // quicker last token
			}
		}
		ttft, decode := logUniformNs(rng, 3600e9)-1, logUniformNs(rng, 3600e9)-1
		r.FirstTokenNs = r.ArrivalNs + ttft
		r.FinishNs = r.FirstTokenNs + decode
		if r.Status == Completed {
			r.OutputTokens = int32(1 + rng.IntN(3)*rng.IntN(2000)) // a third of them 1 token
			continue
		}
		r.OutputTokens = int32(rng.IntN(5))
		if k := rng.IntN(len(reasonTemplates) + 1); k < len(reasonTemplates) { // else unspecified
			r.Reason = fmt.Sprintf(reasonTemplates[k], rng.IntN(9999), rng.IntN(9999), rng.IntN(9999))
		}
	}
	return recs
}

// streamInfo is a RunInfo with instances of every role, tiers and a fleet.
func streamInfo(rng *rand.Rand, instances int) RunInfo {
	info := RunInfo{Scenario: "random", Seed: rng.Uint64(), GPUs: 1 + rng.IntN(64), Device: "GPU", SimTimeNs: 6 * 3600e9,
		WallTimeS: 1.5, Events: rng.Int64N(1e9), RouterOwner: "router-co",
		SLO:   SLO{TTFTNs: logUniformNs(rng, 60e9), TPOTNs: logUniformNs(rng, 1e9), Attainment: 0.9},
		Tiers: []TierInfo{{Name: "host", ReadBytes: 1e9, CapacityBlocks: 100, CachedBlocks: 40}, {Name: "store"}},
		Links: []LinkInfo{{Name: "p0/egress", Bytes: 5e9, Transfers: 7}, {Name: "dc0/wan-egress", Bytes: 1e9}},
		Fleet: &FleetInfo{Pools: []PoolCounts{{Pool: "decode", Points: []CountPoint{{Ready: 1}, {AtNs: 5, Ready: 3}}}},
			Billed:     []BilledInstance{{Pool: "decode", GPUs: 8, BilledNs: 3600e9, CostPerGPUHour: 2, Crashes: 1}},
			ScaleUpsNs: []int64{30e9, 45e9}}}
	roles := []string{RolePrefill, RoleDecode, RoleColocated}
	for i := range instances {
		info.Instances = append(info.Instances, InstanceInfo{Name: fmt.Sprint("inst-", i), Pool: roles[i%3],
			Role: roles[i%3], Owner: []string{"", "acme"}[i%2], GPUs: 8, BusyNs: rng.Int64N(1e12),
			Preemptions: rng.Int64N(10), Waits: [NumWaits]int64{rng.Int64N(1e9)}})
	}
	return info
}

// percentiles returns pointers to every percentile field of s: the fields
// a Summarizer may only approximate.
func percentiles(s *Summary) map[string]*float64 {
	m := map[string]*float64{}
	for name, st := range map[string]*Stats{"ttft": &s.TTFT, "tpot": &s.TPOT, "e2e": &s.E2E} {
		m[name+".p50"], m[name+".p90"], m[name+".p99"] = &st.P50, &st.P90, &st.P99
	}
	if s.Fleet != nil {
		st := &s.Fleet.FailoverStallS
		m["stall.p50"], m["stall.p90"], m["stall.p99"] = &st.P50, &st.P90, &st.P99
	}
	return m
}

// checkStreamed fails unless got's percentiles are within HistogramRelErr
// (plus the rounding to the ns of both) of want's and every other field
// equals want's.
func checkStreamed(t *testing.T, got, want Summary) {
	t.Helper()
	gp, wp := percentiles(&got), percentiles(&want)
	if len(gp) != len(wp) {
		t.Fatalf("percentile fields: got %d, want %d", len(gp), len(wp))
	}
	for name, w := range wp {
		g := gp[name]
		if math.Abs(*g-*w) > HistogramRelErr**w+1.01e-9 {
			t.Errorf("%s = %.9g s, want %.9g s within %.2g", name, *g, *w, HistogramRelErr)
		}
		*g = *w
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streamed summary differs beyond its percentiles:\n got %+v\nwant %+v", got, want)
	}
}

// summarizeStream adds recs one at a time and returns the Summary.
func summarizeStream(recs []Record, itl *Histogram, info RunInfo) (*Summarizer, Summary) {
	return summarizeUpTo(ExactValues, recs, itl, info)
}

// summarizeUpTo is summarizeStream with at most exact values kept per
// distribution.
func summarizeUpTo(exact int, recs []Record, itl *Histogram, info RunInfo) (*Summarizer, Summary) {
	z := NewSummarizer(info.SLO)
	z.SetClasses(info.Classes)
	z.exactMax = exact
	for i := range recs {
		z.Add(&recs[i])
	}
	return z, z.Summary(itl, info)
}

func TestSummarizerMatchesSummarize(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 16))
		instances := rng.IntN(6)
		n := []int{0, 1, 2, 10, 100, 1000}[seed%6]
		recs, info := streamRecords(rng, n, instances), streamInfo(rng, instances)
		if seed%7 == 0 {
			info.Fleet, info.Tiers = nil, nil
		}
		if seed%5 == 0 {
			info.SLO = SLO{}
		}
		if seed%4 == 1 {
			withClasses(rng, recs, &info)
		}
		itl := &Histogram{}
		itl.AddN(logUniformNs(rng, 1e9), 3)
		want := Summarize(recs, itl, info)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			// Under the limit, added in the records' order: exactly.
			if _, got := summarizeStream(recs, itl, info); !reflect.DeepEqual(got, want) {
				t.Errorf("under the limit the streamed summary differs:\n got %+v\nwant %+v", got, want)
			}
			// Room reserved up front (Expect) changes nothing.
			z := NewSummarizer(info.SLO)
			z.SetClasses(info.Classes)
			z.Expect(int64(n) - int64(seed%3))
			for i := range recs {
				z.Add(&recs[i])
			}
			if got := z.Summary(itl, info); !reflect.DeepEqual(got, want) {
				t.Errorf("with room reserved the streamed summary differs:\n got %+v\nwant %+v", got, want)
			}
			// Past it (every value, or half of them): the sketch.
			for _, exact := range []int{0, n / 2} {
				_, got := summarizeUpTo(exact, recs, itl, info)
				checkStreamed(t, got, want)
			}
		})
	}
}

// TestSummarizerDropsValuesPastLimit: one value past the limit, a
// distribution's values are dropped (its memory is the histogram's) and
// stay dropped.
func TestSummarizerDropsValuesPastLimit(t *testing.T) {
	z := NewSummarizer(SLO{})
	z.exactMax = 3
	r := Record{Status: Completed, FirstTokenNs: 5, FinishNs: 9, OutputTokens: 2}
	for i := range 5 {
		z.Add(&r)
		if kept := len(z.ttft.exact.xs) + len(z.e2e.exact.xs) + len(z.tpotExact.xs); (i < 3) != (kept == 3*(i+1)) || (i >= 3 && kept != 0) {
			t.Fatalf("after %d records: %d values kept, limit 3 each", i+1, kept)
		}
	}
	if !z.ttft.exact.over || !z.e2e.exact.over || !z.tpotExact.over {
		t.Error("past the limit a distribution still counts as exact")
	}
}

func TestSummarizerByHand(t *testing.T) {
	recs := handRecords()
	_, got := summarizeStream(recs, handITL(), handInfo())
	checkStreamed(t, got, Summarize(recs, handITL(), handInfo()))
}

// TestSummarizerPercentileBound checks the percentiles against exact ones
// where the histogram's error is largest: many samples, each near the top
// of its bucket, over ns to hours.
func TestSummarizerPercentileBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]Record, 20000)
	for i := range recs {
		v := logUniformNs(rng, 3600e9)
		recs[i] = Record{ID: int64(i), FirstTokenNs: v, FinishNs: 2 * v, OutputTokens: 2, Status: Completed}
	}
	info := RunInfo{}
	_, got := summarizeUpTo(len(recs)/10, recs, nil, info)
	checkStreamed(t, got, Summarize(recs, nil, info))
}

func TestSummarizerMerge(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 17))
		instances := rng.IntN(6)
		recs, info := streamRecords(rng, rng.IntN(500), instances), streamInfo(rng, instances)
		if seed%2 == 1 {
			withClasses(rng, recs, &info)
		}
		cut := rng.IntN(len(recs) + 1)
		// The parts' values fit; the whole's fit too (concatenated) or
		// not (the merge folds them into the sketch, as the whole did).
		for _, exact := range []int{ExactValues, max(cut, len(recs)-cut)} {
			whole, want := summarizeUpTo(exact, recs, nil, info)
			a, _ := summarizeUpTo(exact, recs[:cut], nil, info)
			b, _ := summarizeUpTo(exact, recs[cut:], nil, info)
			a.Merge(b)
			a.Merge(nil)
			a.Merge(NewSummarizer(info.SLO))
			if got := a.Summary(nil, info); !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d, %d exact: merge of halves at %d/%d differs:\n got %+v\nwant %+v", seed, exact, cut, len(recs), got, want)
			}
			empty := NewSummarizer(info.SLO)
			empty.SetClasses(info.Classes)
			empty.exactMax = exact
			empty.Merge(whole)
			if got := empty.Summary(nil, info); !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d, %d exact: merge into an empty summarizer differs", seed, exact)
			}
		}
		if _, want := summarizeStream(recs, nil, info); len(recs) > 0 {
			a, _ := summarizeStream(recs[:cut], nil, info)
			b, _ := summarizeStream(recs[cut:], nil, info)
			a.Merge(b)
			if got := a.Summary(nil, info); !reflect.DeepEqual(got, Summarize(recs, nil, info)) || !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d: merged halves under the limit are not Summarize's summary", seed)
			}
		}
	}
}

func TestSummarizerMergeSLOMismatchPanics(t *testing.T) {
	a, b := NewSummarizer(SLO{TTFTNs: 1}), NewSummarizer(SLO{TTFTNs: 2})
	b.Add(&Record{Status: Completed})
	defer func() {
		if recover() == nil {
			t.Error("Merge of different SLOs did not panic")
		}
	}()
	a.Merge(b)
}

// TestSummarizerLongRun checks that means stay exact when the sums pass
// int64's 2⁶³ ns (292 years), which Histogram's own sum would overflow.
func TestSummarizerLongRun(t *testing.T) {
	z := NewSummarizer(SLO{})
	r := Record{Status: Completed, FirstTokenNs: 3600e9, FinishNs: 7200e9, OutputTokens: 3}
	for range 4000 {
		z.Add(&r)
	}
	big := NewSummarizer(SLO{})
	for range 1000 { // 4·10⁶ requests of an hour: 1.4·10¹⁹ ns of TTFT
		big.Merge(z)
	}
	s := big.Summary(nil, RunInfo{})
	if s.Requests.Completed != 4e6 || s.TTFT.Mean != 3600 || s.E2E.Mean != 7200 || s.TPOT.Mean != 1800 {
		t.Errorf("4e6 hour-long requests: completed %d, means TTFT %g E2E %g TPOT %g s; want 4e6, 3600, 7200, 1800",
			s.Requests.Completed, s.TTFT.Mean, s.E2E.Mean, s.TPOT.Mean)
	}
}

// benchRecords are records for the allocation test and benchmark: mostly
// completed, the rest refused with a few reason kinds, on 8 instances.
func benchRecords() []Record {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := streamRecords(rng, 4096, 8)
	for i := range recs {
		if rng.IntN(10) < 8 {
			recs[i].Status, recs[i].Reason = Completed, ""
		}
	}
	return recs
}

// TestSummarizerAddAllocs: past the exact values' limit (here 0), Add
// allocates nothing after warm-up.
func TestSummarizerAddAllocs(t *testing.T) {
	recs := benchRecords()
	z := NewSummarizer(SLO{TTFTNs: 1e9, TPOTNs: 1e8})
	z.exactMax = 0
	for i := range recs { // warm-up: every kind, instance and hour seen
		z.Add(&recs[i])
	}
	// Per pass over all the records, so that an allocation in a few of
	// them does not round away.
	if a := testing.AllocsPerRun(10, func() {
		for i := range recs {
			z.Add(&recs[i])
		}
	}); a != 0 {
		t.Errorf("Add after warm-up: %g allocs per %d records, want 0", a, len(recs))
	}
}

// BenchmarkSummarizerAdd reports Add's cost per record after warm-up
// past the exact values' limit (B/op and allocs/op, both 0) and a warmed
// Summarizer's memory then (B/summarizer), which no number of records
// changes.
func BenchmarkSummarizerAdd(b *testing.B) {
	recs := benchRecords()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	z := NewSummarizer(SLO{TTFTNs: 1e9, TPOTNs: 1e8})
	z.exactMax = 0 // the sketch alone: past ExactValues
	for i := range recs {
		z.Add(&recs[i])
	}
	runtime.ReadMemStats(&after)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		z.Add(&recs[i%len(recs)])
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "B/summarizer")
}

func TestSummarizerAddPanics(t *testing.T) {
	for name, r := range map[string]Record{
		"negative arrival": {ArrivalNs: -1, Status: Rejected},
		"negative TTFT":    {ArrivalNs: 5, FirstTokenNs: 4, FinishNs: 9, Status: Completed},
		"negative TPOT":    {ArrivalNs: 5, FirstTokenNs: 9, FinishNs: 8, OutputTokens: 2, Status: Completed},
		"unknown status":   {Status: Abandoned + 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Add did not panic", name)
				}
			}()
			NewSummarizer(SLO{}).Add(&r)
		}()
	}
}

func TestSummarizerSummaryLeavesItUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	recs, info := streamRecords(rng, 300, 3), streamInfo(rng, 3)
	z, first := summarizeStream(recs, nil, info)
	if again := z.Summary(nil, info); !reflect.DeepEqual(again, first) {
		t.Error("a second Summary differs from the first")
	}
}

// withClasses gives info two or three classes, each its own SLO, and
// each record one of them.
func withClasses(rng *rand.Rand, recs []Record, info *RunInfo) {
	n := 2 + rng.IntN(2)
	info.Classes = nil
	for k := range n {
		info.Classes = append(info.Classes, Class{Name: fmt.Sprint("c", k),
			SLO: SLO{TTFTNs: logUniformNs(rng, 1e9), TPOTNs: logUniformNs(rng, 1e8), Attainment: rng.Float64()}})
	}
	for i := range recs {
		recs[i].Class = uint8(rng.IntN(n))
	}
}
