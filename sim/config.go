package sim

import (
	"fmt"

	"handoff/models/engine"
	"handoff/models/network"
	"handoff/models/perf"
	"handoff/models/router"
	"handoff/results"
)

// Role is what an instance does in the cluster.
type Role uint8

// The instance roles.
const (
	RoleColocated Role = iota // prefill and decode on the same instance
	RolePrefill               // runs prompts (max_tokens = 1), ships their KV
	RoleDecode                // receives KV, generates the output
)

// String names the role as scenarios do.
func (r Role) String() string {
	return [...]string{"colocated", "prefill", "decode"}[r]
}

// Instance configures one engine replica.
type Instance struct {
	Name   string // unique, e.g. "decode-3"
	Pool   string // the pool it belongs to
	Owner  string // who answers for its time (e.g. a vendor); "" = its pool's name
	Role   Role
	GPUs   int // devices it occupies (tensor-parallel degree)
	Engine engine.Config
	Timer  perf.StepTimer

	// Pipeline, with Engine.Stages > 1, prices each pipeline stage of a
	// micro-batch and the hops between them (pipeline.go); Timer then
	// prices a micro-batch alone. Nil: one step at a time.
	Pipeline *perf.Pipeline

	// Under the reject policy: the least share of its context a preempted
	// sequence must find cached when re-admitted, and what the router does
	// with a refused one (1: re-run it; 2: re-send it with the tokens
	// delivered so far appended to its prompt).
	CacheHitThreshold float64
	RejectPhase       int

	// Prefill role: how a finished prefill holds its KV for the decoder to
	// pull — until a fixed timeout, or for a lease the decoder renews
	// (KVHold, hold.go) — and whether a decoder's refusal before admission
	// leaves the KV held until then (StrandRejected: vLLM before 0.21,
	// whose decoders did not tell the prefiller). StreamKV starts the
	// transfer with the prompt's last prefill step (layer-wise streaming)
	// instead of after it.
	KVHold         KVHold
	StrandRejected bool
	StreamKV       bool

	// Decode role: a decoder whose KV source failed before or during its
	// pull (the prefiller crashed) prefills the prompt itself with
	// RecomputeLoadFailures (vLLM's kv_load_failure_policy: recompute),
	// else the attempt fails over (fail). With DecodeFirst a request routed
	// to it for a remote prefill comes to it first, carrying
	// DecodeFirstThreshold (llm-d's decode-first flow, decodefirst.go).
	RecomputeLoadFailures bool
	DecodeFirst           bool
	DecodeFirstThreshold  float64

	// KVViaStore, on a prefill instance with a store tier, hands its KV
	// off through the store (Mooncake's KV-centric design): a finished
	// prompt's KV is written there, the instance frees it once the write
	// lands, and the decoder reads it from the store, not from here.
	KVViaStore bool

	// StagingBps, on a decoder whose KV layout differs from the prefillers'
	// (a wafer), is the rate at which arriving KV is re-laid-out; 0 = none.
	StagingBps float64

	// KVIn, on a decoder, is the KV a transfer moves into it for a prompt;
	// zero: Config.KVBytesPerToken per token.
	KVIn KVSize

	// FirstEmitNs and FinalEmitNs, on an instance that decodes, are how
	// much later than the engine samples them the client sees the first
	// token and the end of the response (engine core → API server over
	// ZMQ, detokenization, the server-sent event; hardware.Serving). The
	// last token goes the first's way and then closes the response, so
	// 0 ≤ FirstEmitNs ≤ FinalEmitNs.
	FirstEmitNs, FinalEmitNs int64

	// Frontend is the API server in front of this instance's engine:
	// what a request sent to it costs before the engine has it. The
	// cluster's front end (Config.Frontend) takes every request in; an
	// instance's own is paid by a request sent to it again — a decoder's,
	// by a P/D request's decode leg (relay.go).
	Frontend Frontend

	// DPRanks > 1 makes the instance rank DPRank of a data-parallel group
	// of DPRanks consecutive instances that step together, each step priced
	// over all the ranks' batches by its Timer, which must then also be a
	// perf.GroupTimer (dpgroup.go); the router
	// sees every rank as a worker of its own, and with DPBalance the rank
	// it picks stands for the instance: vLLM's load balancer chooses the
	// rank (balanceRank).
	DPRanks, DPRank int
	DPBalance       bool

	// ContextRange, when its upper bound is positive, is the prompt
	// lengths in tokens the instance is deployed for, [lo, hi], as llm-d
	// labels a pod (llm-d.ai/context-length-range); the router reads it
	// through router.Cluster.ContextRange. Zero: none.
	ContextRange [2]int
}

// Frontend is the serving front end a request crosses between the client
// and the router: the API server parses the HTTP request and tokenizes the
// prompt, then hands it to the engine core over ZMQ (vLLM
// v1/engine/async_llm.py, v1/engine/core_client.py). A request reaches the
// router LatencyNs + TokenizeNsPerToken·prompt tokens after it arrives.
type Frontend struct {
	LatencyNs          int64
	TokenizeNsPerToken float64
}

// delayNs is how long the front end takes for a prompt of n tokens.
func (f Frontend) delayNs(n int) int64 {
	return f.LatencyNs + int64(f.TokenizeNsPerToken*float64(n)+0.5)
}

// Client is the benchmark client. TimeoutNs and FirstTokenTimeoutNs are
// how long it waits before it gives up on a request, counted from its
// arrival (0: forever): TimeoutNs bounds the whole response, as aiohttp's
// ClientTimeout(total=...) does; FirstTokenTimeoutNs bounds the wait for
// the first token. The server then aborts the request and frees its KV.
//
// Concurrency, when positive, makes the client a closed loop of that many
// users (see closedloop.go): each sends its next request ThinkNs after its
// previous one ends, Requests in all (0: until the source is exhausted),
// and the source's arrival times are ignored. 0: open loop, the source's
// arrival times.
type Client struct {
	TimeoutNs           int64
	FirstTokenTimeoutNs int64
	Concurrency         int
	ThinkNs             int64
	Requests            int64
}

// timeouts reports whether the client has a timeout.
func (c *Client) timeouts() bool { return c.TimeoutNs|c.FirstTokenTimeoutNs != 0 }

// KVSize is the KV a transfer of a prompt's tokens moves: PerToken bytes
// for each token, plus WindowPerToken bytes for each of at most the last
// WindowTokens of them (sliding-window layers, whose older blocks are not
// sent). The core asks it for the tokens the decoder does not cache.
type KVSize struct {
	PerToken       float64
	WindowPerToken float64
	WindowTokens   int
}

// Bytes is the KV moved for tokens prompt tokens.
func (k KVSize) Bytes(tokens int) float64 {
	return k.PerToken*float64(tokens) + k.WindowPerToken*float64(min(tokens, k.WindowTokens))
}

// Config is everything one run needs. It is built by the scenarios package
// and consumed once by Run.
type Config struct {
	Name            string
	Seed            uint64
	Instances       []Instance
	Router          router.Router
	Topology        *network.Topology // required when any instance has RoleDecode
	KVBytesPerToken float64           // bytes moved per prompt token in a KV transfer, for decoders without KVIn
	Source          Source
	SLO             results.SLO

	// Priorities are the traffic classes' priorities, indexed by
	// Request.Class, which an instance under the priority scheduling policy
	// serves lower first (engine.Seq.Priority); empty: one class.
	Priorities []int32
	// ClassNames name the classes, indexed as Priorities, for the outputs
	// (requests.csv's class column); the simulation does not read them.
	ClassNames []string
	Frontend   Frontend // between the client and the router
	Client     Client   // the client's timeouts

	// ProxyNs is what a P/D proxy in front of the engines (Ray Serve's PD
	// proxy, vLLM's toy proxy, llm-d's sidecar) adds between a prefill's
	// end and its decoder's API server: its call to the prefiller coming
	// back, and its call to the decoder going out (relay.go).
	ProxyNs int64

	// LockupThresholdNs is how long a spell without progress may last
	// before it counts as a lock-up (lockup.go: a deadlock, a preemption
	// loop, or a prefiller pinned by KV its decoders do not pull).
	// LockupAbortNs bounds a lock-up of any kind: an instance that has
	// made no progress for this long and is locked up aborts its requests
	// (a pinned prefiller, those whose KV it holds too), which end as
	// failed (0: never; a deadlock then ends the run with the error that
	// requests never ended).
	LockupThresholdNs int64
	LockupAbortNs     int64

	// RefreshIntervalNs is how often the router's view of instance state is
	// refreshed (0: before every decision, an oracle). The core hashes each
	// request's prompt blocks for a router that uses them
	// (router.HashUser).
	RefreshIntervalNs int64

	// RouterCountsSharedBlocks makes the router's bookkeeping count a
	// block that several requests active on an instance share once
	// (Dynamo's router_assume_kv_reuse; colocated clusters, with a router
	// that uses hashes). Cost: one map entry per distinct active block.
	RouterCountsSharedBlocks bool

	// TimelineIntervalNs, when positive, samples every instance's KV
	// occupancy, batch, queue and preemptions at every multiple of it into
	// Result.Timelines, idle or not; a run that would take more than
	// TimelineSamples samples per instance is sampled at a coarser multiple
	// (see Timeline); fewer than 3 count as 3.
	TimelineIntervalNs int64
	TimelineSamples    int

	// Tracer, when set, receives the journeys of requests with ID below
	// TraceRequests, or of those TraceSelect picks when it is set.
	Tracer        Tracer
	TraceRequests int64
	TraceSelect   func(id int64) bool

	// Scaling sizes pools while the run goes on (fleet.go); Faults and
	// FaultRates make instances crash, links fail and steps straggle
	// (faults.go). None: a fixed fleet that never fails.
	Scaling    []PoolScaling
	Faults     []Fault
	FaultRates *FaultRates

	// Progress, when set, is called every ProgressEvents events and once
	// at the end of the run with the simulated time, the requests ended
	// and their total (the source's MaxRequests, −1 when it cannot say).
	// It must not touch the run; nil costs one test per event.
	Progress func(simNs, ended, total int64)

	// Records, when set, takes each request's record as soon as it and
	// every earlier request have ended (see RecordSink), and the run
	// keeps only the records from the oldest request in flight to the
	// newest: memory independent of how many requests the run has.
	// Result.Records is then nil. nil: the run keeps every record and
	// returns them in Result.Records.
	Records RecordSink

	// allViews fills every view's state even for a router that reads
	// none (router.StateReader): a test's switch, to show that skipping
	// them changes nothing.
	allViews bool
	// scanViews fills every view before each decision, as the core did
	// before it kept them current by what changed, and keeps the router
	// from indexing them (router.Indexer), so that it scans: a test's
	// switch, the reference indexed routing is held to.
	scanViews bool
	// checkViews checks before each decision that every view holds the
	// router's current bookkeeping: a test's switch.
	checkViews bool
	// indexAlways keeps the router's indexes however few the instances
	// (indexFrom): a test's switch.
	indexAlways bool
	// shard marks a shard of a split run (split.go): its requests' content
	// is keyed by their IDs in the whole run (fillSeq), and its result
	// says how its timelines go on past its end.
	shard bool
	// eager plans every engine step the general way (engine.Instance.Eager):
	// a test's switch, to show that the fast paths change nothing.
	eager bool
}

// ProgressEvents is how many events pass between two calls of
// Config.Progress (a power of two).
const ProgressEvents = 1 << 14

// ProgressTotal is the request total Config.Progress reports: the
// source's count, or −1 when it cannot say.
func (c *Config) ProgressTotal() int64 {
	if s, ok := c.Source.(Counted); ok {
		return int64(s.MaxRequests())
	}
	return -1
}

// ReservedRecords is how many records a run that keeps them all
// (Records nil) reserves room for up front: a Counted source's count,
// capped, else none.
func (c *Config) ReservedRecords() int {
	if s, ok := c.Source.(Counted); ok {
		return min(s.MaxRequests(), maxReserved)
	}
	return 0
}

// hasStore reports whether an engine reads and writes a shared store.
func hasStore(e engine.Config) bool {
	for _, t := range e.Tiers {
		if t.Kind == engine.TierStore {
			return true
		}
	}
	return false
}

// validate checks the cluster shape: colocated instances alone, or prefill
// and decode instances together with a topology joining them.
func (c *Config) validate() error {
	var roles [3]int
	for i := range c.Instances {
		in := &c.Instances[i]
		roles[in.Role]++
		if in.Timer == nil {
			return fmt.Errorf("sim: instance %s has no step timer", in.Name)
		}
		if err := in.Engine.Validate(); err != nil {
			return fmt.Errorf("sim: instance %s: %w", in.Name, err)
		}
		if stages := max(in.Engine.Stages, 1); in.Pipeline != nil && in.Pipeline.Stages() != stages ||
			in.Pipeline == nil && stages > 1 || in.Pipeline != nil && in.DPRanks > 1 {
			return fmt.Errorf("sim: instance %s: a pipeline of stages needs Engine.Stages to match it, and no data-parallel group", in.Name)
		}
		if in.StreamKV && in.Engine.Stages > 1 {
			return fmt.Errorf("sim: instance %s streams its KV layer by layer from a pipeline of stages: not modelled", in.Name)
		}
		if in.KVViaStore && (in.Role != RolePrefill || !hasStore(in.Engine)) {
			return fmt.Errorf("sim: instance %s hands its KV off through a store it does not have", in.Name)
		}
		if in.FirstEmitNs < 0 || in.FinalEmitNs < in.FirstEmitNs {
			return fmt.Errorf("sim: instance %s: emission times must satisfy 0 ≤ first ≤ final", in.Name)
		}
		if in.Frontend.LatencyNs < 0 || !(in.Frontend.TokenizeNsPerToken >= 0) {
			return fmt.Errorf("sim: instance %s: its front end's latency and tokenization time must not be negative", in.Name)
		}
		if err := in.validateHandoff(); err != nil {
			return fmt.Errorf("sim: instance %s: %w", in.Name, err)
		}
		if cr := in.ContextRange; cr[0] < 0 || cr[1] > 0 && cr[0] > cr[1] {
			return fmt.Errorf("sim: instance %s: its context range needs 0 ≤ lo ≤ hi", in.Name)
		}
	}
	if err := c.checkGroups(); err != nil {
		return err
	}
	if err := c.validateFleet(); err != nil {
		return err
	}
	switch {
	case c.Frontend.LatencyNs < 0 || !(c.Frontend.TokenizeNsPerToken >= 0):
		return fmt.Errorf("sim: the front end's latency and tokenization time must not be negative")
	case c.ProxyNs < 0:
		return fmt.Errorf("sim: the P/D proxy's time must not be negative")
	case c.Client.TimeoutNs < 0 || c.Client.FirstTokenTimeoutNs < 0:
		return fmt.Errorf("sim: the client's timeouts must not be negative")
	case c.Client.Concurrency < 0 || c.Client.ThinkNs < 0 || c.Client.Requests < 0:
		return fmt.Errorf("sim: the client's concurrency, think time and requests must not be negative")
	case c.Client.Concurrency > 0 && isSessions(c.Source):
		return fmt.Errorf("sim: a session source paces its own turns: it cannot run in a closed loop")
	case len(c.Instances) == 0:
		return fmt.Errorf("sim: no instances")
	case roles[RoleColocated] > 0 && roles[RolePrefill]+roles[RoleDecode] > 0:
		return fmt.Errorf("sim: colocated pools cannot be mixed with prefill/decode pools")
	case (roles[RolePrefill] > 0) != (roles[RoleDecode] > 0):
		return fmt.Errorf("sim: a disaggregated cluster needs both prefill and decode pools")
	case roles[RoleDecode] > 0 && c.Topology == nil:
		return fmt.Errorf("sim: a disaggregated cluster needs a network topology")
	case c.Router == nil || c.Source == nil:
		return fmt.Errorf("sim: router and source are required")
	case router.CountsOutputBlocks(c.Router) && !router.ReadsInstanceState(c.Router):
		return fmt.Errorf("sim: counting output blocks in the router's bookkeeping needs a router that reads the instances' state")
	}
	return c.validateDecodeFirst()
}
