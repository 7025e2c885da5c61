package results

import (
	"math"
	"math/bits"
)

// Summarizer builds a run's Summary from records handed to it one at a
// time as requests end, in memory bounded independently of how many there
// are: a run of 10⁸ requests need not keep its records. Summarizers of the
// parts of a run (shards, or the points of a sweep combined) merge into
// the Summarizer of the whole.
//
// Each distribution (TTFT, TPOT, E2E, Fleet.FailoverStallS) keeps its
// values as they are up to ExactValues (2²⁰) of them, and while it does,
// its statistics are computed as Summarize computes them, from the same
// values in the order they were added. So Summary(itl, info) equals
// Summarize(recs, itl, info) field for field, exactly, when the records
// were added in the order of recs (the simulator hands them over in ID
// order, the order of its Records) and no distribution passed the limit
// — and the rest of the fields equal it whenever Summarize's float64 sums
// of integer ns are exact (every partial sum under 2⁵³ ns, ≈ 104 days).
//
// A distribution past the limit drops its values (Merge drops them too
// when the two together pass it) and comes from a log-linear Histogram
// that holds every value from the start; then these fields are within a
// relative HistogramRelErr (≈ 0.39 %) of Summarize's, up to the summary's
// rounding to the ns:
//   - TTFT, TPOT and E2E: P50, P90, P99 (TPOT's histogram kept in units
//     of 2⁻¹⁰ ns, so it also carries ≤ 2⁻¹⁰ ns of flooring);
//   - Fleet.FailoverStallS: P50, P90, P99;
//
// and its mean comes from an exact sum: of integer ns in 128 bits, equal
// to Summarize's whenever Summarize's float64 sum is exact and closer to
// the truth beyond; TPOT's in fixed point (2⁻³² ns units, each value
// floored), which differs from Summarize's float64 sum only by float
// rounding, far below the ns the summary rounds both to, and the
// interactivity (1 / mean TPOT) with it.
//
// Every other field is exact in any order of adding: the request counts
// and Σ preemptions; the reason groups (kind, count, lowest-ID example);
// the maxima; throughput, offered rate, SLO good count, attainment and
// request goodput; prefix-cache and lower-tier hit rates; the preemption
// summary's Σ rejections and wasted tokens; the attribution's component
// and owner means (128-bit sums, as above); the per-hour attainment; the
// failed-over and lost counts. The fields that come from RunInfo
// (instances, network, waits, tiers' bytes, fleet cost and pools,
// scale-ups, preemption counters) and from itl are computed as Summarize
// computes them.
//
// What cannot be streamed: exact percentiles. An exact order statistic
// of n values needs memory proportional to n in one pass (Munro and
// Paterson, 1980), hence the limit. (Outside Summarize, LimitShares and
// the requests.csv writer read records too; the first is two counts a
// caller can keep (LimitCounts), the second writes each record as it
// ends (rundir.RequestsWriter).)
//
// Memory: up to ExactValues values of 8 B per distribution, 8 MiB each
// (32 MiB in all at most; 24 B per completed request below the limit),
// grown as they arrive and freed past it; four Histograms of about 57 KB
// each, allocated as their first sample arrives (the failover-stall one
// only when a request fails over); one entry per reason kind, per
// instance index seen and per hour of arrivals. Past the limit Add
// allocates only when it meets a new reason kind, instance index or hour:
// warmed on 4,096 records of 8 instances, 5 hours and 20 reason kinds, a
// Summarizer past the limit has allocated 269,152 B
// (BenchmarkSummarizerAdd's B/summarizer), and each further Add costs
// 0 B. Not safe for concurrent use.
type Summarizer struct {
	slo      SLO
	exactMax int // values each distribution keeps exactly (ExactValues)

	counts      RequestCounts
	preemptions int64
	expired     int64 // Σ Record.ExpiredKVReads
	bounces     int64 // Σ Record.Bounces
	rejections  int64 // Σ Record.Rejections
	wasted      int64 // Σ Record.WastedTokens

	good                         int64
	outputTokens, prompt, cached int64
	tierTokens                   [3]int64
	firstArrivalNs               int64 // valid when counts.Total > 0
	lastArrivalNs, lastFinishNs  int64

	rejects, drops, fails, gone reasonTally
	kind                        []byte // scratch for a reason's kind

	ttft, e2e, stall intDist
	tpot             Histogram // units of 2⁻¹⁰ ns
	tpotSum          int128    // units of 2⁻³² ns
	tpotMaxNs        float64
	tpotExact        exactValues

	// Attribution: Σ of each Record.Time component, and per instance
	// index + 1 (0: none) the sums attribute keeps per slot.
	timeNs [NumTimes]int128
	slots  []slotSums

	failedOver, lost int64
	hours            []hourCount // by hour of arrival

	classes classTally // per traffic class (SetClasses); nil: none
}

// intDist is a distribution of non-negative integer ns: a Histogram for
// its quantiles and an exact 128-bit sum for its mean, and its values
// while they fit.
type intDist struct {
	h     Histogram
	sum   int128
	exact exactValues
}

// slotSums is what attribute sums for one instance: prefill-side TTFT,
// decoder TTFT, decoder decode time, and whether a completed request used it.
type slotSums struct {
	prefill, decodeFirst, decode int128
	used                         bool
}

// hourCount is one hour's requests and good requests.
type hourCount struct{ all, good int64 }

// TPOT's fixed-point scales: the histogram keeps TPOT in units of
// 2^-tpotHistBits ns, the mean's sum in units of 2^-tpotSumBits ns.
const (
	tpotHistBits = 10
	tpotSumBits  = 32
)

// NewSummarizer returns an empty Summarizer judging requests against slo
// (the RunInfo.SLO its Summary will be given).
func NewSummarizer(slo SLO) *Summarizer { return &Summarizer{slo: slo, exactMax: ExactValues} }

// SetClasses makes z summarize each traffic class apart too, as the
// RunInfo.Classes its Summary will be given; call it before Add.
func (z *Summarizer) SetClasses(classes []Class) { z.classes = newClassTally(classes) }

// Add counts one ended request. O(1) (O(len(r.Reason)) for a request that
// did not complete); r is not retained, but its Reason string may be.
// Panics on an unknown status, a negative arrival time, or a completed
// record whose TTFT, E2E or TPOT is negative (the simulator emits none).
func (z *Summarizer) Add(r *Record) {
	if r.ArrivalNs < 0 {
		panic("results: record arrives before the run starts")
	}
	if z.counts.Total == 0 || r.ArrivalNs < z.firstArrivalNs {
		z.firstArrivalNs = r.ArrivalNs
	}
	z.counts.Total++
	z.lastArrivalNs = max(z.lastArrivalNs, r.ArrivalNs)
	if z.classes != nil {
		z.classes.add(r)
	}
	z.lastFinishNs = max(z.lastFinishNs, r.FinishNs)
	z.preemptions += int64(r.Preemptions)
	z.expired += int64(r.ExpiredKVReads)
	z.bounces += int64(r.Bounces)
	z.rejections += int64(r.Rejections)
	z.wasted += int64(r.WastedTokens)
	good := false
	switch r.Status {
	case Completed:
		z.counts.Completed++
		good = meetsSLO(r, z.slo)
		z.addCompleted(r, good)
	case Rejected:
		z.counts.Rejected++
		z.addReason(&z.rejects, r)
	case Dropped:
		z.counts.Dropped++
		z.addReason(&z.drops, r)
	case Failed:
		z.counts.Failed++
		z.addReason(&z.fails, r)
	case Abandoned:
		z.counts.Abandoned++
		z.addReason(&z.gone, r)
	default:
		panic("results: record with unknown status")
	}
	z.addFleet(r, good)
}

// addCompleted adds a completed request's latencies, tokens and time
// components.
func (z *Summarizer) addCompleted(r *Record, good bool) {
	if good {
		z.good++
	}
	z.outputTokens += int64(r.OutputTokens)
	z.prompt += int64(r.PromptTokens)
	z.cached += int64(r.CachedTokens)
	for k, n := range r.TierTokens {
		z.tierTokens[k] += int64(n)
	}
	z.ttft.add(r.FirstTokenNs-r.ArrivalNs, z.exactMax)
	z.e2e.add(r.FinishNs-r.ArrivalNs, z.exactMax)
	if r.OutputTokens >= 2 {
		z.addTPOT(r.FinishNs-r.FirstTokenNs, uint64(r.OutputTokens-1))
	}
	for k, ns := range r.Time {
		z.timeNs[k].add(ns)
	}
	z.grow(max(r.PrefillInstance, r.DecodeInstance))
	pf := &z.slots[max(r.PrefillInstance+1, 0)]
	dec := pf
	if r.DecodeInstance >= 0 {
		dec = &z.slots[r.DecodeInstance+1]
	}
	prefill, decodeFirst, decode := slotTimes(r)
	pf.prefill.add(prefill)
	dec.decodeFirst.add(decodeFirst)
	dec.decode.add(decode)
	pf.used, dec.used = true, true
}

// addTPOT adds the TPOT dNs/gaps: exactly to the maximum (as Summarize
// divides), floored to 2⁻³² ns to the mean's sum and to 2⁻¹⁰ ns to the
// histogram.
func (z *Summarizer) addTPOT(dNs int64, gaps uint64) {
	if dNs < 0 {
		panic("results: record finishes before its first token")
	}
	tpot := float64(dNs) / float64(gaps)
	z.tpotMaxNs = max(z.tpotMaxNs, tpot)
	z.tpotExact.add(tpot, z.exactMax)
	// q = ⌊dNs·2³² / gaps⌋ in 128 bits, by long division in two words.
	qHi, rem := bits.Div64(0, uint64(dNs)>>(64-tpotSumBits), gaps)
	qLo, _ := bits.Div64(rem, uint64(dNs)<<tpotSumBits, gaps)
	z.tpotSum = z.tpotSum.plus(int128{hi: int64(qHi), lo: qLo})
	shift := uint(tpotSumBits - tpotHistBits)
	v := qLo>>shift | qHi<<(64-shift)
	if qHi>>shift != 0 || v > math.MaxInt64 {
		v = math.MaxInt64 // over 2⁵³ ns per token (104 days)
	}
	z.tpot.Add(int64(v))
}

// grow extends the slot table to instance index i (slot i+1).
func (z *Summarizer) grow(i int32) {
	for len(z.slots) <= int(i)+1 {
		z.slots = append(z.slots, slotSums{})
	}
}

// addReason counts r's reason kind into t without allocating unless the
// kind is new.
func (z *Summarizer) addReason(t *reasonTally, r *Record) {
	z.kind = appendReasonKind(z.kind[:0], r.Reason)
	if i, ok := t.index[string(z.kind)]; ok {
		g := &t.groups[i]
		g.Count++
		if r.ID < g.ExampleRequest {
			g.ExampleRequest, g.ExampleReason = r.ID, r.Reason
		}
		return
	}
	t.insert(ReasonGroup{Kind: string(z.kind), Count: 1, ExampleRequest: r.ID, ExampleReason: r.Reason})
}

// addFleet counts r in its hour of arrival and as failed over.
func (z *Summarizer) addFleet(r *Record, good bool) {
	if r.Failovers > 0 {
		z.failedOver++
		z.stall.add(int64(r.FailoverUs)*1e3, z.exactMax)
		if r.Status != Completed {
			z.lost++
		}
	}
	h := int(r.ArrivalNs / 3.6e12)
	for len(z.hours) <= h {
		z.hours = append(z.hours, hourCount{})
	}
	z.hours[h].all++
	if good {
		z.hours[h].good++
	}
}

// Merge adds every request o has counted to z, as if each had been added
// to z. O(histogram buckets + reason kinds + instances + hours); o is
// unchanged and may be nil. Panics if the two judge against different
// SLOs.
func (z *Summarizer) Merge(o *Summarizer) {
	if o == nil || o.counts.Total == 0 {
		return
	}
	if z.slo != o.slo {
		panic("results: merging summarizers of different SLOs")
	}
	if z.classes != nil || o.classes != nil {
		z.classes.merge(o.classes)
	}
	if z.counts.Total == 0 || o.firstArrivalNs < z.firstArrivalNs {
		z.firstArrivalNs = o.firstArrivalNs
	}
	z.lastArrivalNs, z.lastFinishNs = max(z.lastArrivalNs, o.lastArrivalNs), max(z.lastFinishNs, o.lastFinishNs)
	c, oc := &z.counts, &o.counts
	c.Total, c.Completed, c.Rejected = c.Total+oc.Total, c.Completed+oc.Completed, c.Rejected+oc.Rejected
	c.Dropped, c.Failed, c.Abandoned = c.Dropped+oc.Dropped, c.Failed+oc.Failed, c.Abandoned+oc.Abandoned
	z.preemptions, z.rejections, z.wasted = z.preemptions+o.preemptions, z.rejections+o.rejections, z.wasted+o.wasted
	z.expired, z.bounces = z.expired+o.expired, z.bounces+o.bounces
	z.good, z.outputTokens = z.good+o.good, z.outputTokens+o.outputTokens
	z.prompt, z.cached = z.prompt+o.prompt, z.cached+o.cached
	for k := range z.tierTokens {
		z.tierTokens[k] += o.tierTokens[k]
	}
	z.rejects.merge(&o.rejects)
	z.drops.merge(&o.drops)
	z.fails.merge(&o.fails)
	z.gone.merge(&o.gone)
	z.ttft.merge(&o.ttft, z.exactMax)
	z.e2e.merge(&o.e2e, z.exactMax)
	z.stall.merge(&o.stall, z.exactMax)
	z.tpot.Merge(&o.tpot)
	z.tpotExact.merge(&o.tpotExact, z.exactMax)
	z.tpotSum = z.tpotSum.plus(o.tpotSum)
	z.tpotMaxNs = max(z.tpotMaxNs, o.tpotMaxNs)
	for k := range z.timeNs {
		z.timeNs[k] = z.timeNs[k].plus(o.timeNs[k])
	}
	z.grow(int32(len(o.slots) - 2))
	for i := range o.slots {
		z.slots[i].merge(&o.slots[i])
	}
	z.failedOver, z.lost = z.failedOver+o.failedOver, z.lost+o.lost
	for h, n := range o.hours {
		for len(z.hours) <= h {
			z.hours = append(z.hours, hourCount{})
		}
		z.hours[h].all += n.all
		z.hours[h].good += n.good
	}
}

// Summary returns the run's Summary from the requests added, itl (may be
// nil: one sample per inter-token gap) and info, as Summarize would; see
// Summarizer for which fields are approximate. info.SLO must be the SLO
// the Summarizer was made with (it panics otherwise). z is unchanged.
// O(histogram buckets + reason kinds + instances + hours).
func (z *Summarizer) Summary(itl *Histogram, info RunInfo) Summary {
	if info.SLO.TTFTNs != z.slo.TTFTNs || info.SLO.TPOTNs != z.slo.TPOTNs {
		panic("results: summary under another SLO than the summarizer's")
	}
	s := Summary{
		Scenario:           info.Scenario,
		Seed:               info.Seed,
		GPUs:               info.GPUs,
		Device:             info.Device,
		Requests:           z.counts,
		Preemptions:        z.preemptions,
		ExpiredKVReads:     z.expired,
		DecodeFirstBounces: z.bounces,
		TTFT:               z.ttft.stats(),
		TPOT:               z.tpotStats(),
		ITL:                histStats(itl),
		E2E:                z.e2e.stats(),
		SimTimeS:           float64(info.SimTimeNs) / 1e9,
		WallTimeS:          finite(info.WallTimeS),
		Events:             info.Events,
	}
	s.RejectReasons, s.DropReasons, s.FailReasons = z.rejects.sorted(), z.drops.sorted(), z.fails.sorted()
	s.AbandonReasons = z.gone.sorted()
	t := totals{completed: z.counts.Completed, good: z.good, outputTokens: z.outputTokens,
		prompt: z.prompt, cached: z.cached, firstArrivalNs: z.firstArrivalNs,
		lastFinishNs: z.lastFinishNs, lastArrivalNs: z.lastArrivalNs}
	fillRates(&s, t, info)
	if len(info.Classes) != len(z.classes) {
		panic("results: summary of other classes than the summarizer's")
	}
	if z.classes != nil {
		s.Classes = z.classes.summaries(info.Classes, t.span(), info.GPUs)
	}
	s.Preemption = summarizePreemption(nil, info.Instances, info.LockupChains)
	s.Preemption.Rejections, s.Preemption.WastedTokens = z.rejections, z.wasted
	s.Attribution = z.attribution(info)
	s.Network = summarizeNetwork(info.Links)
	s.Instances = summarizeInstances(info.Instances)
	s.KVTiers = z.tiers(info.Tiers)
	s.Waits = summarizeWaits(info.Instances)
	s.Speculative = summarizeSpec(info.Instances)
	if info.Fleet != nil {
		s.Fleet = z.fleet(info.Fleet)
	}
	s.Warnings = handoffWarnings(&s)
	return s
}

// tpotStats is the TPOT's Stats in s.
func (z *Summarizer) tpotStats() Stats {
	h := &z.tpot
	if h.Count() == 0 {
		return Stats{}
	}
	if s, ok := z.tpotExact.stats(); ok {
		return s
	}
	const unit = 1 << tpotHistBits
	return Stats{
		Mean: nsToS(z.tpotSum.float() / (1 << tpotSumBits) / float64(h.Count())),
		P50:  nsToS(h.Quantile(0.50) / unit),
		P90:  nsToS(h.Quantile(0.90) / unit),
		P99:  nsToS(h.Quantile(0.99) / unit),
		Max:  nsToS(z.tpotMaxNs),
	}
}

// attribution is attribute's Attribution from the sums: instance indices
// with no InstanceInfo fold into slot 0, as attribute's slot does.
func (z *Summarizer) attribution(info RunInfo) Attribution {
	n := int(z.counts.Completed)
	var compNs [NumTimes]float64
	for k := range compNs {
		compNs[k] = z.timeNs[k].float()
	}
	folded := make([]slotSums, len(info.Instances)+1)
	for i := range z.slots {
		k := i
		if k >= len(folded) {
			k = 0
		}
		folded[k].merge(&z.slots[i])
	}
	slotNs := make([][3]float64, len(folded))
	used := make([]bool, len(folded))
	for i := range folded {
		f := &folded[i]
		slotNs[i] = [3]float64{f.prefill.float(), f.decodeFirst.float(), f.decode.float()}
		used[i] = f.used
	}
	return attributionOf(info, &compNs, slotNs, used, n)
}

// tiers is summarizeTiers' result from the sums.
func (z *Summarizer) tiers(tiers []TierInfo) []TierSummary {
	out := summarizeTiers(nil, tiers)
	for i := range out {
		if k, ok := tierIndex[out[i].Name]; ok && z.prompt > 0 {
			out[i].HitRate = float64(z.tierTokens[k]) / float64(z.prompt)
		}
	}
	return out
}

// fleet is SummarizeFleet's result from the counts.
func (z *Summarizer) fleet(f *FleetInfo) *FleetSummary {
	s := SummarizeFleet(nil, f, z.slo)
	s.FailedOver, s.Lost, s.FailoverStallS = z.failedOver, z.lost, z.stall.stats()
	for _, h := range z.hours {
		s.AttainmentPerHour = append(s.AttainmentPerHour, ratio(h.good, h.all))
	}
	return s
}

// add records one sample, keeping at most max values exactly. Panics if
// ns < 0.
func (d *intDist) add(ns int64, max int) {
	if ns < 0 {
		panic("results: negative latency in a completed record")
	}
	d.h.Add(ns)
	d.sum.add(ns)
	d.exact.add(float64(ns), max)
}

// merge adds o's samples to d, keeping at most max values exactly.
func (d *intDist) merge(o *intDist, max int) {
	d.h.Merge(&o.h)
	d.sum = d.sum.plus(o.sum)
	d.exact.merge(&o.exact, max)
}

// stats is statsNs's result: exactly while the values are kept, else the
// percentiles from the histogram and the mean from the exact sum.
func (d *intDist) stats() Stats {
	if d.h.Count() == 0 {
		return Stats{}
	}
	if s, ok := d.exact.stats(); ok {
		return s
	}
	s := histStats(&d.h)
	s.Mean = nsToS(d.sum.float() / float64(d.h.Count()))
	return s
}

// merge adds o's sums to s.
func (s *slotSums) merge(o *slotSums) {
	s.prefill = s.prefill.plus(o.prefill)
	s.decodeFirst = s.decodeFirst.plus(o.decodeFirst)
	s.decode = s.decode.plus(o.decode)
	s.used = s.used || o.used
}

// insert appends a group of a kind t does not hold yet.
func (t *reasonTally) insert(g ReasonGroup) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[g.Kind] = len(t.groups)
	t.groups = append(t.groups, g)
}

// merge adds o's groups to t, keeping the lowest-ID example of each kind.
func (t *reasonTally) merge(o *reasonTally) {
	for _, g := range o.groups {
		i, ok := t.index[g.Kind]
		if !ok {
			t.insert(g)
			continue
		}
		tg := &t.groups[i]
		tg.Count += g.Count
		if g.ExampleRequest < tg.ExampleRequest {
			tg.ExampleRequest, tg.ExampleReason = g.ExampleRequest, g.ExampleReason
		}
	}
}

// int128 is a two's-complement 128-bit integer, for sums of ns that
// int64 would overflow: 2⁶³ ns is 292 years, and 10⁸ requests of an hour
// each sum to 41,000 years.
type int128 struct {
	hi int64
	lo uint64
}

// add adds v to x.
func (x *int128) add(v int64) { *x = x.plus(int128{hi: v >> 63, lo: uint64(v)}) }

// plus returns x + y.
func (x int128) plus(y int128) int128 {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	return int128{hi: x.hi + y.hi + int64(carry), lo: lo}
}

// float returns x as a float64: exact below 2⁵³ in magnitude.
func (x int128) float() float64 {
	if x.hi < 0 {
		neg := int128{hi: ^x.hi, lo: ^x.lo}.plus(int128{lo: 1})
		return -neg.float()
	}
	return float64(x.hi)*(1<<64) + float64(x.lo)
}
