package sim

import "handoff/models/engine"

// replica is one instance's state in a run: its engine, the step in
// flight, the router's bookkeeping of the work routed to it, and the
// figures the core derives from its events. The cluster keeps one per
// configured instance, in Config.Instances order.
type replica struct {
	cfg            *Instance
	eng            *engine.Instance
	stepStartNs    int64 // start of the step in flight
	busyNs         int64 // time spent inside steps
	kickPending    bool  // a deferred plan (classKick) is queued
	watching       bool  // a lock-up watchdog event is queued
	abortAfterStep bool  // locked up: abort its requests when the step in flight ends
	outstanding    int   // requests routed here and not yet finished here
	group          int32 // its data-parallel group in cluster.groups; −1: none (dpgroup.go)

	// The router's bookkeeping (book.go): prompt tokens routed here whose
	// prefill has not finished, and KV blocks of the requests routed here
	// to decode, until they finish.
	prefillTokens int
	blocks        int
	routed        int           // requests routed here to decode, from routing until they finish here
	through       int           // prefill role: requests routed here to prefill, from routing until they finish wherever they decode
	tokenLoad     int           // llm-d's in-flight token load: estimated tokens of the requests routed here (book.go)
	shared        *sharedBlocks // with Config.RouterCountsSharedBlocks: active requests' shared blocks
	unique        int           // with shared: active requests' blocks past their shared prefixes
	outputBlocks  int           // for a router that counts them, the blocks the output of those decoding here filled, at the last refresh (book.go)

	hold    kvHold // prefill role: deadlines of held KV, stranded KV (hold.go, strand.go)
	held    heldKV // prefill role: KV held for decoders that have not pulled it (lockchain.go)
	metrics instanceMetrics

	// Its life in a changing fleet (fleet.go, faults.go; the rest in
	// fleet.times): its state, whether the router's view lists it, its
	// pool in cluster.fleet, its straggler's step-time factor (0: none),
	// and the queue sequence number up to which its recompile events went
	// moot with a crash.
	life     lifeState
	visible  bool
	pool     int32
	slow     float64
	staleSeq uint64

	// stepGen tags its step events: only the one tagged with the current
	// generation applies (a crash, or a run cut short, moves it on).
	stepGen uint32
	run     stepRun    // its steps planned ahead (steprun.go)
	pipe    *pipeState // pipeline parallel: its stages and micro-batches in flight (pipeline.go); nil: none
}

// newReplica returns the run state of instance ic with a fresh engine
// (eager: see Config.eager).
func newReplica(ic *Instance, eager bool) replica {
	eng := engine.New(ic.Engine)
	if eager {
		eng.Eager()
	}
	rp := replica{cfg: ic, eng: eng, metrics: instanceMetrics{progressNs: -1}}
	if ic.Pipeline != nil {
		rp.pipe = newPipeState(ic.Pipeline)
	}
	return rp
}

// uniqueBlocks adds delta to the active requests' blocks past their
// shared prefixes and returns the total.
func (r *replica) uniqueBlocks(delta int) int {
	r.unique += delta
	return r.unique
}

// owner is who answers for the instance's time: its owner, else its pool.
func (r *replica) owner() string {
	if r.cfg.Owner != "" {
		return r.cfg.Owner
	}
	return r.cfg.Pool
}
