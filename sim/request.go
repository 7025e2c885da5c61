package sim

import "handoff/models/kv"

// Request is one client request as a workload source produces it.
type Request struct {
	ID           int64        // dense, from 0 in arrival order; set by the source
	ArrivalNs    int64        // arrival time, ns since the start of the run
	PromptTokens int          // input length (ISL)
	OutputTokens int          // tokens the server will generate (OSL), ≥ 1
	Prefix       []kv.Segment // prompt content; tokens past the segments are unique to the request
	Output       kv.Segment   // output content, as a later prompt repeats it (engine.Seq.Output); zero = unique
	Session      int32        // the session it belongs to (SessionSource only; dense from 0)
	Turn         uint16       // its turn in the session, from 1; 0 = not part of a session
	Class        uint8        // its traffic class, indexing Config.Priorities; 0 without classes
}

// Source yields requests in non-decreasing arrival order. Next fills r and
// reports false when the source is exhausted; an error ends the run and names
// the offending input (file, line, field).
type Source interface {
	Next(r *Request) (bool, error)
}

// Counted is a Source that knows how many requests it will yield at most;
// a run reserves room for that many records up front instead of growing
// them as requests arrive.
type Counted interface {
	Source
	MaxRequests() int
}

// maxReserved caps the records a run reserves from a Counted source.
const maxReserved = 1 << 22
