package openmetrics

import (
	"math/bits"
	"sort"

	"handoff/results"
)

// Engine is one instance as its labels name it.
type Engine struct {
	Name, Pool, Role string
}

// Sample is an instance's state at a grid point, as the timeline holds it.
type Sample struct {
	AtNs             int64
	Running, Waiting int32
	KVUsed           float64 // [0, 1]
	Preemptions      int32   // since the previous timeline sample
}

// Recorder gathers a run's metrics on a grid of simulated time: point k
// at k × IntervalNs stands for the state at the end of that instant, and
// holds what was observed in ((k−1)·IntervalNs, k·IntervalNs]. Give it
// every record (Record) as the run ends them, in any order, then the
// timeline's samples (Gauges), then write it (Write).
type Recorder struct {
	engines    []Engine
	intervalNs int64
	maxPoints  int // per engine; past it the grid coarsens
	series     []series
}

// series is one engine's deltas (histograms, counters) and gauges at
// every grid point.
type series struct {
	hists            [numHists]hist
	prompt, gen      []int64
	success          [len(finishReasons)][]int64
	running, waiting []int32
	kv               []float64
	preempt          []int64 // cumulative
}

// hist is a histogram's deltas: per point, a count per bucket (the last
// above every bound) and the sum of the values.
type hist struct {
	bounds []float64
	counts []uint32 // point-major, len(bounds)+1 a point
	sums   []float64
}

// NewRecorder returns a Recorder of the engines (indexed as the records'
// instance fields index them) on a grid of intervalNs, that keeps at most
// budget points over all engines (at least 3 each).
func NewRecorder(engines []Engine, intervalNs int64, budget int) *Recorder {
	if intervalNs <= 0 {
		panic("openmetrics: interval must be positive")
	}
	r := &Recorder{engines: engines, intervalNs: intervalNs, series: make([]series, len(engines)),
		maxPoints: max(3, budget/max(len(engines), 1))}
	for i := range r.series {
		for h := range r.series[i].hists {
			r.series[i].hists[h].bounds = hists[h].buckets
		}
	}
	return r
}

// IntervalNs is the grid's spacing now.
func (r *Recorder) IntervalNs() int64 { return r.intervalNs }

// point returns the grid point that an observation at atNs falls in,
// coarsening the grid until it fits, and makes room for it in every series.
func (r *Recorder) point(atNs int64) int {
	k := int((atNs + r.intervalNs - 1) / r.intervalNs)
	for k >= r.maxPoints {
		r.coarsen()
		k = int((atNs + r.intervalNs - 1) / r.intervalNs)
	}
	for i := range r.series {
		r.series[i].grow(k + 1)
	}
	return k
}

// Record adds the observations of one request's record to the engine
// that served it: its decode instance, or its prefill instance when it
// reached no decoder. A request no engine finished (rejected, dropped) is
// not counted, as vLLM's API server refuses those before its engines see
// them. Cost: O(grid points the request spans).
func (r *Recorder) Record(rec *results.Record) {
	reason, ok := finishReason(rec.Status)
	e := rec.DecodeInstance
	if e < 0 {
		e = rec.PrefillInstance
	}
	if !ok || e < 0 || int(e) >= len(r.series) {
		return
	}
	if rec.OutputTokens > 0 {
		r.tokens(int(e), rec)
	}
	p := r.point(rec.FinishNs)
	s := &r.series[e]
	s.success[reason][p]++
	t := timings(rec)
	for h, v := range [...]float64{hTPOT: t.tpotS, hE2E: t.e2eS, hQueue: t.queueS, hInference: t.prefillS + t.decodeS,
		hPrefill: t.prefillS, hDecode: t.decodeS, hTTFT: -1, hITL: -1} {
		if v >= 0 {
			s.hists[h].observe(p, v, 1)
		}
	}
}

// finishReason maps a status to vLLM's finished_reason; false for a
// request no engine finished.
func finishReason(st results.Status) (int, bool) {
	switch st {
	case results.Completed:
		return reasonLength, true
	case results.Abandoned:
		return reasonAbort, true
	case results.Failed:
		return reasonError, true
	}
	return 0, false
}

// tokens observes a request's output tokens where they were produced: the
// first at its first token, with its TTFT and prompt tokens (vLLM counts
// the prompt when its prefill yields the first token); the rest spread
// evenly to its finish, as a record keeps only the first and last token's
// times, each with a gap of the request's mean (the ITL histogram's count
// and sum are exact, its buckets those of the mean gap).
func (r *Recorder) tokens(e int, rec *results.Record) {
	first, n, spanNs := rec.FirstTokenNs, int64(rec.OutputTokens), rec.FinishNs-rec.FirstTokenNs
	p := r.point(first)
	s := &r.series[e]
	s.hists[hTTFT].observe(p, float64(first-rec.ArrivalNs)/1e9, 1)
	s.prompt[p] += int64(rec.PromptTokens)
	if n == 1 || spanNs <= 0 {
		s.gen[p] += n
		return
	}
	gapS := float64(spanNs) / float64(n-1) / 1e9
	r.point(rec.FinishNs) // grow (and coarsen) once, before walking the points
	seen := int64(0)      // tokens at or before the previous point's end
	for k := r.pointOf(first); seen < n; k++ {
		upto := tokensBy(int64(k)*r.intervalNs, first, spanNs, n)
		if c := upto - seen; c > 0 {
			s.gen[k] += c
			if gaps := c - boolInt(seen == 0); gaps > 0 {
				s.hists[hITL].observe(k, gapS, uint32(gaps))
			}
		}
		seen = upto
	}
}

// pointOf is the grid point of atNs on the grid as it is.
func (r *Recorder) pointOf(atNs int64) int { return int((atNs + r.intervalNs - 1) / r.intervalNs) }

// tokensBy counts the tokens of n spread evenly over [first, first+span]
// produced at or before atNs: token k is at first + k·span/(n−1).
func tokensBy(atNs, first, spanNs, n int64) int64 {
	if atNs < first {
		return 0
	}
	if atNs-first >= spanNs {
		return n
	}
	hi, lo := bits.Mul64(uint64(atNs-first), uint64(n-1)) // < span·(n−1): the quotient fits
	q, _ := bits.Div64(hi, lo, uint64(spanNs))
	return int64(q) + 1
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// requestTimes are a finished request's timings in vLLM's terms, s.
type requestTimes struct {
	e2eS, queueS, prefillS, decodeS, tpotS float64
}

// timings maps a record onto vLLM's RequestStateStats intervals
// (vllm/v1/metrics/stats.py: update_from_finished_request), seen from
// the fleet as one engine: queued from its arrival at the router until its
// prefill was first scheduled (router and prefill queues); prefill from
// then to its first token (compute, onboarding, KV transfer, the
// decoder's first step); decode from its first token to its last. A
// request with no token has no decode, its prefill running to its end.
func timings(rec *results.Record) requestTimes {
	e2e := rec.FinishNs - rec.ArrivalNs
	queue := rec.Time[results.TRouter] + rec.Time[results.TPrefillQueue]
	t := requestTimes{e2eS: float64(e2e) / 1e9, queueS: float64(queue) / 1e9}
	end := rec.FinishNs
	if rec.OutputTokens > 0 {
		end = rec.FirstTokenNs
		t.decodeS = float64(rec.FinishNs-rec.FirstTokenNs) / 1e9
		if rec.OutputTokens > 1 {
			t.tpotS = t.decodeS / float64(rec.OutputTokens-1)
		}
	}
	prefill := end - rec.ArrivalNs - rec.Time[results.TFrontend] - queue
	t.prefillS = float64(max(prefill, 0)) / 1e9
	return t
}

// observe adds n observations of v at point p.
func (h *hist) observe(p int, v float64, n uint32) {
	nb := len(h.bounds) + 1
	h.counts[p*nb+sort.SearchFloat64s(h.bounds, v)] += n // le: the first bound ≥ v
	h.sums[p] += v * float64(n)
}
