// Package results turns per-request records into metrics (TTFT, TPOT, ITL,
// E2E, goodput, attainment) and renders them: a summary table, summary.json
// and requests.csv.
package results

// Status is how a request ended. Every request ends exactly once.
type Status uint8

// The final states of a request.
const (
	Completed Status = iota // all output tokens delivered
	Rejected                // refused by admission control and never served
	Dropped                 // could not be served (e.g. longer than any instance holds)
)

func (s Status) String() string {
	switch s {
	case Completed:
		return "completed"
	case Rejected:
		return "rejected"
	case Dropped:
		return "dropped"
	}
	return "unknown"
}

// Record is the journey of one request, in nanoseconds since the start of the
// run. Instance fields index Run.Instances; -1 means none.
type Record struct {
	ID              int64
	ArrivalNs       int64
	FirstTokenNs    int64 // first output token seen by the client; 0 if none
	FinishNs        int64 // completion, rejection or drop time
	PromptTokens    int32
	OutputTokens    int32 // tokens delivered to the client
	CachedTokens    int32 // prompt tokens served from a prefix cache
	PrefillInstance int32
	DecodeInstance  int32
	Preemptions     int32
	Status          Status
	Reason          string // why it was rejected or dropped; empty if completed
}
