package results

import "fmt"

// SLO is a service-level objective per request. A zero latency limit means
// "no limit" on that metric.
type SLO struct {
	TTFTNs     int64   // time-to-first-token limit, ns
	TPOTNs     int64   // time-per-output-token limit, ns
	Attainment float64 // target share of requests meeting both (e.g. 0.9), reported as met or not
}

// RunInfo is what the simulator knows about a run beyond its records.
type RunInfo struct {
	Scenario  string
	Seed      uint64
	GPUs      int     // devices in the fleet, of every kind, for per-device request goodput
	Device    string  // what they are called ("GPU", "Trainium chip", "wafer", "LPU", or "device" for a mix)
	SimTimeNs int64   // simulated time at the end of the run, ns
	WallTimeS float64 // wall-clock run time, s (differs between identical runs)
	Events    int64   // events processed
	SLO       SLO
	Classes   []Class        // the traffic classes, when the workload has them; Record.Class indexes them
	Instances []InstanceInfo // per instance; Record.PrefillInstance/DecodeInstance index this

	TransferOwner string // who answers for KV transfer time; "" = Nobody
	RouterOwner   string // who answers for router queueing; "" = Nobody
	Links         []LinkInfo
	Tiers         []TierInfo    // the lower KV tiers, when any instance has them
	Fleet         *FleetInfo    // when the fleet changes (autoscaling, crashes); nil for a fixed one
	LockupChains  []LockupChain // the waits-for chains lock-ups formed between instances
}

// RequestCounts counts requests by final status; Total is their sum.
type RequestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Rejected  int64 `json:"rejected"`
	Dropped   int64 `json:"dropped"`
	Failed    int64 `json:"failed"`
	Abandoned int64 `json:"abandoned"` // the client's timeout ended them (see results.Abandoned)
}

// Throughput is completed work per second of the run's span (first arrival
// to last finish over all records), and the two axes of InferenceMAX's
// throughput-versus-interactivity charts: output tokens per second per
// GPU of the fleet, and tokens per second one user sees (1 / mean TPOT).
type Throughput struct {
	RequestsPerS           float64 `json:"requests_per_s"`
	OutputTokensPerS       float64 `json:"output_tokens_per_s"`
	OfferedPerS            float64 `json:"offered_requests_per_s"`              // arrivals over the arrival span (first to last arrival); 0 if it is 0
	OutputTokensPerSPerGPU float64 `json:"output_tokens_per_s_per_gpu"`         // OutputTokensPerS / GPUs; 0 without GPUs
	InteractivityPerUser   float64 `json:"interactivity_tokens_per_s_per_user"` // 1 / TPOT.Mean, tokens/s per user; 0 without a TPOT
}

// SLOSummary reports SLO attainment and request goodput; see Summarize
// for the definitions. (The max goodput of `handoff goodput`, DistServe's
// highest rate that meets the attainment target, is a search over runs,
// not a figure of one run.)
type SLOSummary struct {
	TTFTS                   float64 `json:"ttft_s"` // limit, s (0: none)
	TPOTS                   float64 `json:"tpot_s"` // limit, s (0: none)
	Good                    int64   `json:"good"`   // requests that completed within both limits
	Attainment              float64 `json:"attainment"`
	Target                  float64 `json:"target"`
	Met                     bool    `json:"met"` // Attainment ≥ Target
	RequestGoodputRPS       float64 `json:"request_goodput_rps"`
	RequestGoodputRPSPerGPU float64 `json:"request_goodput_rps_per_gpu"`
}

// Summary is the aggregate result of one run, as written to summary.json.
// Latencies are in seconds. Map keys are sorted by encoding/json, so the
// encoding is deterministic (except WallTimeS).
type Summary struct {
	Scenario           string            `json:"scenario"`
	Seed               uint64            `json:"seed"`
	GPUs               int               `json:"gpus"`             // devices of every kind, not GPUs alone (the key is kept)
	Device             string            `json:"device,omitempty"` // what they are called (RunInfo.Device); "" in files of older versions
	Requests           RequestCounts     `json:"requests"`
	RejectReasons      []ReasonGroup     `json:"reject_reasons"`  // by kind, most first
	DropReasons        []ReasonGroup     `json:"drop_reasons"`    // by kind, most first
	FailReasons        []ReasonGroup     `json:"fail_reasons"`    // by kind, most first
	AbandonReasons     []ReasonGroup     `json:"abandon_reasons"` // by kind, most first
	TTFT               Stats             `json:"ttft_s"`
	TPOT               Stats             `json:"tpot_s"`
	ITL                Stats             `json:"itl_s"`
	E2E                Stats             `json:"e2e_s"`
	Throughput         Throughput        `json:"throughput"`
	SLO                SLOSummary        `json:"slo"`
	Classes            []ClassSummary    `json:"classes,omitempty"` // per traffic class, each under its own SLO (classes.go)
	PrefixCacheHitRate float64           `json:"prefix_cache_hit_rate"`
	Preemptions        int64             `json:"preemptions"`                    // Σ Record.Preemptions
	ExpiredKVReads     int64             `json:"expired_kv_reads,omitempty"`     // Σ Record.ExpiredKVReads: pulls that read KV freed at its prefiller's hold timeout
	DecodeFirstBounces int64             `json:"decode_first_bounces,omitempty"` // Σ Record.Bounces: decode-first tries their decoder refused
	Preemption         PreemptionSummary `json:"preemption"`
	Attribution        Attribution       `json:"attribution"`
	Network            NetworkSummary    `json:"network"`
	SimTimeS           float64           `json:"sim_time_s"`
	WallTimeS          float64           `json:"wall_time_s"`
	Events             int64             `json:"events"`
	Instances          []InstanceSummary `json:"instances"`
	KVTiers            []TierSummary     `json:"kv_tiers,omitempty"`    // host, disk, store: when the run has them
	Waits              WaitSummary       `json:"waits"`                 // why requests waited for admission
	Fleet              *FleetSummary     `json:"fleet,omitempty"`       // a changing fleet's cost, sizes and faults (fleet.go)
	Speculative        *SpecSummary      `json:"speculative,omitempty"` // speculative decoding's acceptance, when any pool drafts (speculative.go)
	// Warnings are what the run changed of its input (a trace's 0-token
	// prompts and outputs served as 1 token: the caller that knows the
	// input adds them), then what may make its results wrong (pulls of
	// expired KV), one line each.
	Warnings []string `json:"warnings,omitempty"`
}

// Summarize computes a run's Summary. recs is not modified; itl (may be nil)
// holds one sample per inter-token gap.
//
// Definitions (DistServe's): TTFT = FirstTokenNs − ArrivalNs; E2E =
// FinishNs − ArrivalNs; TPOT = (E2E − TTFT)/(OutputTokens − 1), defined only
// for requests with ≥ 2 output tokens. Latency statistics cover completed
// requests only; percentiles use Quantile's method (linear interpolation
// between closest ranks). A request is good when it completed with TTFT ≤
// the TTFT limit and TPOT ≤ the TPOT limit (a 1-token request meets any TPOT
// limit). Attainment = good / all requests (completed, rejected and dropped).
// Throughput counts completed requests and their output tokens over the run
// span: first arrival to last finish over all records (vLLM's benchmark
// duration, from the first request sent to the last one finished). Request
// goodput = good / the same span, as vLLM's request_goodput
// (vllm/benchmarks/serve.py, calculate_metrics: good_completed / dur_s), so
// it never exceeds the throughput; 0 when the span is. Output throughput
// per GPU = output tokens/s / RunInfo.GPUs. Interactivity = 1 / mean TPOT
// (tokens/s per user), TPOT as above — vLLM bench's per-request
// (E2E − TTFT)/(output − 1) averaged over requests
// (vllm/benchmarks/serve.py, calculate_metrics: mean_tpot_ms), the
// figure InferenceMAX plots as tok/s/user. Prefix-cache hit rate
// = Σ cached / Σ prompt tokens over completed requests. Preemption
// statistics cover the decode instances (all of them when colocated), with
// decoder prefill share = Σ prefill busy / Σ busy time over them; lock-ups
// cover every instance. The
// attribution holds means over completed requests of each Record.Time
// component and of each owner's part: router time is RouterOwner's,
// transfer time TransferOwner's, prefill queueing and compute the prefill
// instance's owner's, the decoder components the decode instance's owner's,
// rejection time Nobody's.
//
// Cost: expected O(n) time (selection, not sorting; ~0.1 s for 1e6
// records) and one []float64 of completed-count scratch.
func Summarize(recs []Record, itl *Histogram, info RunInfo) Summary {
	s := Summary{
		Scenario:  info.Scenario,
		Seed:      info.Seed,
		GPUs:      info.GPUs,
		Device:    info.Device,
		ITL:       histStats(itl),
		SimTimeS:  float64(info.SimTimeNs) / 1e9,
		WallTimeS: finite(info.WallTimeS),
		Events:    info.Events,
	}
	t := tally(recs, info.SLO, &s)
	scratch := make([]float64, 0, t.completed)
	s.TTFT = statsNs(collect(scratch, recs, ttftNs))
	s.TPOT = statsNs(collect(scratch, recs, tpotNs))
	s.E2E = statsNs(collect(scratch, recs, e2eNs))
	fillRates(&s, t, info)
	s.Classes = summarizeClasses(recs, info, t.span())
	s.Preemption = summarizePreemption(recs, info.Instances, info.LockupChains)
	s.Attribution = attribute(recs, info)
	s.Network = summarizeNetwork(info.Links)
	s.Instances = summarizeInstances(info.Instances)
	s.KVTiers = summarizeTiers(recs, info.Tiers)
	s.Waits = summarizeWaits(info.Instances)
	s.Speculative = summarizeSpec(info.Instances)
	if info.Fleet != nil {
		s.Fleet = SummarizeFleet(recs, info.Fleet, info.SLO)
	}
	s.Warnings = handoffWarnings(&s)
	return s
}

// handoffWarnings warns of requests served from KV their prefiller had
// freed: vLLM's decoder does not notice such a read, and answers from
// whatever the blocks hold by then.
func handoffWarnings(s *Summary) []string {
	if s.ExpiredKVReads == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d KV pulls read blocks their prefiller had freed at its hold timeout (kv_hold): "+
		"vLLM does not detect it, and those requests' output may be wrong (a longer timeout, or mode: lease, avoids it)",
		s.ExpiredKVReads)}
}

// totals are the sums Summarize gathers in one pass over the records.
type totals struct {
	completed, good              int64
	outputTokens, prompt, cached int64
	firstArrivalNs, lastFinishNs int64
	lastArrivalNs                int64
	rejects, drops, fails, gone  reasonTally
}

// tally counts statuses, reasons, preemptions and good requests into s and
// returns the sums needed for rates. O(n).
func tally(recs []Record, slo SLO, s *Summary) totals {
	var t totals
	for i := range recs {
		r := &recs[i]
		if i == 0 || r.ArrivalNs < t.firstArrivalNs {
			t.firstArrivalNs = r.ArrivalNs
		}
		t.lastArrivalNs = max(t.lastArrivalNs, r.ArrivalNs)
		t.lastFinishNs = max(t.lastFinishNs, r.FinishNs)
		s.Preemptions += int64(r.Preemptions)
		s.ExpiredKVReads += int64(r.ExpiredKVReads)
		s.DecodeFirstBounces += int64(r.Bounces)
		switch r.Status {
		case Completed:
			s.Requests.Completed++
			t.outputTokens += int64(r.OutputTokens)
			t.prompt += int64(r.PromptTokens)
			t.cached += int64(r.CachedTokens)
			if meetsSLO(r, slo) {
				t.good++
			}
		case Rejected:
			s.Requests.Rejected++
			t.rejects.add(r)
		case Dropped:
			s.Requests.Dropped++
			t.drops.add(r)
		case Failed:
			s.Requests.Failed++
			t.fails.add(r)
		case Abandoned:
			s.Requests.Abandoned++
			t.gone.add(r)
		default:
			panic("results: record with unknown status")
		}
	}
	s.Requests.Total = int64(len(recs))
	t.completed = s.Requests.Completed
	s.RejectReasons, s.DropReasons, s.FailReasons = t.rejects.sorted(), t.drops.sorted(), t.fails.sorted()
	s.AbandonReasons = t.gone.sorted()
	return t
}

// fillRates sets throughput, SLO attainment, request goodput and cache hit rate.
func fillRates(s *Summary, t totals, info RunInfo) {
	runNs := t.span()
	s.Throughput.RequestsPerS = perS(t.completed, runNs)
	s.Throughput.OutputTokensPerS = perS(t.outputTokens, runNs)
	s.Throughput.OfferedPerS = perS(s.Requests.Total, t.lastArrivalNs-t.firstArrivalNs)
	s.SLO = SLOSummary{
		TTFTS:             float64(info.SLO.TTFTNs) / 1e9,
		TPOTS:             float64(info.SLO.TPOTNs) / 1e9,
		Good:              t.good,
		Attainment:        ratio(t.good, s.Requests.Total),
		Target:            finite(info.SLO.Attainment),
		RequestGoodputRPS: perS(t.good, runNs),
	}
	s.SLO.Met = s.SLO.Attainment >= s.SLO.Target
	if info.GPUs > 0 {
		s.SLO.RequestGoodputRPSPerGPU = s.SLO.RequestGoodputRPS / float64(info.GPUs)
		s.Throughput.OutputTokensPerSPerGPU = s.Throughput.OutputTokensPerS / float64(info.GPUs)
	}
	if s.TPOT.Mean > 0 {
		s.Throughput.InteractivityPerUser = 1 / s.TPOT.Mean
	}
	s.PrefixCacheHitRate = ratio(t.cached, t.prompt)
}

// span is the run's span, first arrival to last finish (0 if negative).
func (t *totals) span() int64 { return max(0, t.lastFinishNs-t.firstArrivalNs) }

// meetsSLO reports whether a completed request met both latency limits.
func meetsSLO(r *Record, slo SLO) bool { return meetsTTFT(r, slo) && meetsTPOT(r, slo) }

// meetsTTFT reports whether a completed request met the TTFT limit (0: none).
func meetsTTFT(r *Record, slo SLO) bool {
	return slo.TTFTNs <= 0 || r.FirstTokenNs-r.ArrivalNs <= slo.TTFTNs
}

// meetsTPOT reports whether a completed request met the TPOT limit (0:
// none; a 1-token request meets any). The test is exact in integers:
// E2E − TTFT ≤ limit·(tokens − 1).
func meetsTPOT(r *Record, slo SLO) bool {
	return slo.TPOTNs <= 0 || r.OutputTokens < 2 || r.FinishNs-r.FirstTokenNs <= slo.TPOTNs*int64(r.OutputTokens-1)
}

// LimitShares is the share of all requests that completed within the
// TTFT limit, and the share within the TPOT limit, each on its own:
// DistServe's looser goodput criterion, beside attainment's both at
// once. Both are 0 for no records.
func LimitShares(recs []Record, slo SLO) (ttft, tpot float64) {
	c := LimitCounts{SLO: slo}
	for i := range recs {
		c.Add(&recs[i])
	}
	return c.Shares()
}

// LimitCounts is LimitShares one record at a time: three counts.
type LimitCounts struct {
	SLO                 SLO
	all, okTTFT, okTPOT int64
}

// Add counts one ended request.
func (c *LimitCounts) Add(r *Record) {
	c.all++
	if r.Status != Completed {
		return
	}
	if meetsTTFT(r, c.SLO) {
		c.okTTFT++
	}
	if meetsTPOT(r, c.SLO) {
		c.okTPOT++
	}
}

// Shares is LimitShares of the requests added.
func (c *LimitCounts) Shares() (ttft, tpot float64) {
	if c.all == 0 {
		return 0, 0
	}
	n := float64(c.all)
	return float64(c.okTTFT) / n, float64(c.okTPOT) / n
}

// Per-request latencies in ns; ok is false when the metric is undefined.
func ttftNs(r *Record) (float64, bool) { return float64(r.FirstTokenNs - r.ArrivalNs), true }
func e2eNs(r *Record) (float64, bool)  { return float64(r.FinishNs - r.ArrivalNs), true }
func tpotNs(r *Record) (float64, bool) {
	if r.OutputTokens < 2 {
		return 0, false
	}
	return float64(r.FinishNs-r.FirstTokenNs) / float64(r.OutputTokens-1), true
}

// collect overwrites dst with metric(r) for every completed record that
// defines it and returns the filled slice.
func collect(dst []float64, recs []Record, metric func(*Record) (float64, bool)) []float64 {
	dst = dst[:0]
	for i := range recs {
		if recs[i].Status != Completed {
			continue
		}
		if v, ok := metric(&recs[i]); ok {
			dst = append(dst, v)
		}
	}
	return dst
}

// perS returns n per second over spanNs, or 0 when the span is empty.
func perS(n, spanNs int64) float64 {
	if spanNs <= 0 {
		return 0
	}
	return float64(n) * 1e9 / float64(spanNs)
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
