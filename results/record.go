// Package results turns per-request records into metrics (TTFT, TPOT, ITL,
// E2E, goodput, attainment) and renders them: a summary table, summary.json
// and requests.csv.
//
// Two ways lead to a Summary. Summarize (summary.go, with stats.go,
// reasons.go, attribution.go, instances.go, tiers.go and fleet.go) reads
// a run's records all at once and computes exact percentiles. A
// Summarizer (stream.go) takes the records one at a time as requests end,
// in memory bounded whatever their number: up to ExactValues per
// distribution it keeps the values (exact.go) and its Summary is
// Summarize's; past that its percentiles come from Histograms
// (histogram.go) within HistogramRelErr. Summarizers of a run's parts
// merge. Its doc lists which fields are exact.
//
// Beside it: rundir and sweepdir read and write a run's and a sweep's
// output directories (each format in one place), outdir writes every
// output file safely, plot draws the figures and report the HTML page,
// all from those directories.
package results

// Status is how a request ended. Every request ends exactly once.
type Status uint8

// The final states of a request.
const (
	Completed Status = iota // all output tokens delivered
	Rejected                // refused by admission control and never served
	Dropped                 // could not be served (e.g. longer than any instance holds)
	Failed                  // aborted while in flight (e.g. its decoder locked up)
	Abandoned               // the client gave up (its timeout) before the response ended; the server aborted it
)

// String names the status as requests.csv does.
func (s Status) String() string {
	switch s {
	case Completed:
		return "completed"
	case Rejected:
		return "rejected"
	case Dropped:
		return "dropped"
	case Failed:
		return "failed"
	case Abandoned:
		return "abandoned"
	}
	return "unknown"
}

// Record is the journey of one request, in nanoseconds since the start of the
// run. Instance fields index Run.Instances; -1 means none.
type Record struct {
	ID              int64
	ArrivalNs       int64
	FirstTokenNs    int64 // first output token seen by the client; 0 if none (then OutputTokens is 0 too)
	FinishNs        int64 // completion, rejection or drop time; an abandoned request's client deadline
	PromptTokens    int32
	OutputTokens    int32 // tokens delivered to the client (by its deadline, when it gave up)
	CachedTokens    int32 // prompt tokens served from a prefix cache
	PrefillInstance int32
	DecodeInstance  int32
	Preemptions     int32
	Rejections      int16    // times a decoder refused it and the router re-sent it
	ExpiredKVReads  uint8    // times its decoder read its prompt's KV after the prefiller's hold timeout freed it: its output may be wrong
	Bounces         uint8    // times a decode-first decoder refused it (cache_threshold) and it went to a prefiller
	WastedTokens    int32    // generated tokens thrown away by phase-1 rejections
	TierTokens      [3]int32 // prompt tokens read from each lower KV tier (host, disk, store), every admission counted
	// FailoverUs is the stall its fail-overs caused, from each crash to the
	// new attempt's first token, in µs (saturating; µs keep the record at
	// its size).
	FailoverUs int32
	// Waits splits the time it waited in instances' queues for admission by
	// cause (the Wait* constants); re-prefills after a preemption are not
	// included.
	Waits     [NumWaits]int64
	Status    Status
	Failovers uint8  // times an instance it had state on crashed and it was sent again
	Turn      uint16 // turn in its session, from 1; 0 = not part of a session
	Session   int32  // its session (dense from 0) when Turn > 0
	Class     uint8  // its traffic class, indexing RunInfo.Classes; 0 without classes
	Reason    string // why it was rejected or dropped; empty if completed

	// Time splits the request's life into components (the T* constants),
	// none negative but TEmit (see there): the TTFT components sum to FirstTokenNs − ArrivalNs
	// when it had a first token, and all of them to FinishNs − ArrivalNs,
	// whatever its status. The server's time on a request past its end (a
	// step or transfer in flight when its client gave up) is not in them.
	Time [NumTimes]int64
}

// The time components of a request. The first seven split TTFT, the rest
// the time from the first token to the last.
const (
	TFrontend       = iota // the serving front end: client → engine (HTTP, tokenization) and the first token's way back
	TRouter                // reached the router → enqueued on its prefill instance
	TPrefillQueue          // waiting on the prefill instance (and recomputing there after a preemption)
	TPrefillCompute        // prefill steps
	TOnboard               // copying prefix hits up from lower KV tiers (host, disk, store) before the prefill goes on
	TTransfer              // KV transfer and staging into the decoder
	TDecodeFirst           // on the decoder before the first token: waiting for blocks, then the first step
	TDecodeCompute         // decode steps
	TDecodeQueue           // waiting on the decoder while not preempted
	TReprefill             // from a recompute preemption until its context was recomputed
	TSwap                  // swapped out to the host tier
	TRejection             // from a decoder's rejection until the new attempt's first token
	TEmit                  // the last token's way to the client less the first's (negative only if a fail-over moved it to a decoder of a quicker emission); for a request that did not complete, its response still on its way when its client gave up
	NumTimes
)

// The causes a queued request waits for, indexing Record.Waits: a step in
// flight, the running set full (max_num_seqs), no KV blocks for the
// queue's head, the step's token budget spent.
const (
	WaitBusy = iota
	WaitMaxSeqs
	WaitKV
	WaitBudget
	NumWaits
)

// WaitNames are the causes' names in reports, indexed by Wait*.
var WaitNames = [NumWaits]string{"busy", "max_num_seqs", "kv_blocks", "token_budget"}

// FirstDecodeTime is the index of the first decode-time component.
const FirstDecodeTime = TDecodeCompute

// TimeNames are the components' names in reports, index by T*.
var TimeNames = [NumTimes]string{"frontend", "router_queue", "prefill_queue", "prefill_compute", "onboard", "transfer",
	"decode_queue_first", "decode_compute", "decode_queue", "reprefill", "swap", "rejection", "emit"}
