// Package scenarios is the scenario file: its schema, strict loading with
// line-numbered errors, --set overrides, defaults, validation, and the
// translation of a scenario into a simulator configuration. The shipped
// example scenarios live beside this file; workload sources live in
// scenarios/workload.
package scenarios

import (
	"handoff/hardware"
	"handoff/models/llm"
	"handoff/models/perf"
	"handoff/models/router"
	"handoff/models/units"
	"handoff/scenarios/search"
	"handoff/scenarios/sweep"
	"handoff/scenarios/workload"
)

// Scenario is one scenario file, decoded. Defaults fills every optional
// field, so a scenario written back out is complete and loads to itself.
type Scenario struct {
	Name     string    `yaml:"name"`
	Seed     uint64    `yaml:"seed"`
	Model    string    `yaml:"model"` // served-model catalog name
	SLO      SLO       `yaml:"slo"`
	Workload Workload  `yaml:"workload"`
	Pools    []Pool    `yaml:"pools"`
	Link     Link      `yaml:"link,omitempty"`     // one link kind between all instances; or:
	Topology *Topology `yaml:"topology,omitempty"` // a hierarchy of links (topology.go)
	Router   Router    `yaml:"router"`
	Gateway  Gateway   `yaml:"gateway,omitempty"`  // serving layers in front of the engines' API servers
	KVStore  *KVStore  `yaml:"kv_store,omitempty"` // a KV store shared by the pools whose kv_tiers list it (tiers.go)
	Catalog  Catalog   `yaml:"catalog,omitempty"`
	Metrics  Metrics   `yaml:"metrics"`
	Sweep    *Sweep    `yaml:"sweep,omitempty"`  // what `handoff sweep` varies; `run` ignores it
	Plan     *Plan     `yaml:"plan,omitempty"`   // the fleets `handoff plan` searches; `run` ignores it
	Faults   *Faults   `yaml:"faults,omitempty"` // crashes, link faults, stragglers (faults.go)
}

// Gateway is the serving layers a request crosses besides the engines'
// own API servers — a gateway, Ray Serve's HTTP proxy and ingress, a P/D
// proxy — and the time they add. Latency is every request's, on its way
// in and its first token's way out (charged on the way in, on top of the
// accelerator's frontend_latency). Hop is one routed call a P/D proxy
// makes, there and back; a request prefilled on another instance than the
// one that decodes it makes two (to the prefiller, then to the decoder),
// both charged between its prefill and its decoder's front end (the sim's
// relay).
type Gateway struct {
	Latency units.Duration `yaml:"latency,omitempty"`
	Hop     units.Duration `yaml:"hop,omitempty"`
}

// Plan is a scenario's plan block: per pool, the counts, hardware and TP
// that `handoff plan` tries (package scenarios/search resolves it).
type Plan = search.Plan

// Sweep is a scenario's sweep block: grid and zip axes and replicas
// (package scenarios/sweep expands it).
type Sweep = sweep.Spec

// SLO is the latency objective a request must meet to count toward goodput.
type SLO struct {
	TTFT       units.Duration `yaml:"ttft"`
	TPOT       units.Duration `yaml:"tpot"`
	Attainment float64        `yaml:"attainment"` // target share of requests meeting both
}

// Workload is exactly one request source plus a rate scale.
type Workload struct {
	Synthetic    *workload.Synthetic    `yaml:"synthetic,omitempty"`
	SharedPrefix *workload.SharedPrefix `yaml:"shared_prefix,omitempty"`
	Trace        *workload.Trace        `yaml:"trace,omitempty"`
	ServeGen     *workload.ServeGen     `yaml:"servegen,omitempty"`
	// Sessions generates multi-turn conversations: each turn's prompt is
	// the conversation so far plus new input, sent think_ms after the
	// previous turn ended (a trace of sessions: trace.format sessions).
	Sessions  *workload.Sessions `yaml:"sessions,omitempty"`
	RateScale float64            `yaml:"rate_scale"` // 2 = arrivals twice as fast
	// Classes tag the requests with traffic classes, each with its share,
	// priority and SLO (classes.go); none: one class under slo.
	Classes []Class `yaml:"classes,omitempty"`
	Client  Client  `yaml:"client,omitempty"`
}

// Client is how long the benchmark client waits for a request before it
// gives up and disconnects (0 or omitted: forever); the server then aborts
// the request. Timeout counts from the request's arrival to the end of the
// response, as aiohttp's ClientTimeout(total=...) does: inference-perf
// passes no timeout when its request_timeout is null, so aiohttp's session
// default, total = 300 s, applies. FirstTokenTimeout counts from arrival to
// the first token.
//
// Concurrency, when positive, makes the client a closed loop of that many
// users, as `vllm bench serve --max-concurrency N --request-rate inf`
// runs: at t = 0 the first N requests are sent; whenever one ends — for
// any reason — its user sends the next ThinkTime later, until Requests
// have been sent (0: until the source is exhausted). The source supplies
// the requests' lengths and prefixes in its order; its arrival times are
// ignored, so rate_scale cannot be set with it. 0 or omitted: open loop,
// the source's arrival times.
type Client struct {
	Timeout           units.Duration `yaml:"timeout,omitempty"`
	FirstTokenTimeout units.Duration `yaml:"first_token_timeout,omitempty"`
	Concurrency       int            `yaml:"concurrency,omitempty"`
	ThinkTime         units.Duration `yaml:"think_time,omitempty"`
	Requests          int64          `yaml:"requests,omitempty"`
}

// Pool is a group of identical instances.
type Pool struct {
	Name       string    `yaml:"name"`
	Role       string    `yaml:"role"` // colocated | prefill | decode
	Count      int       `yaml:"count"`
	Hardware   string    `yaml:"hardware"`
	TP         int       `yaml:"tp"`
	DP         int       `yaml:"dp,omitempty"`         // data-parallel attention ranks per instance (MoE, with ep = dp × tp)
	EP         int       `yaml:"ep,omitempty"`         // expert-parallel degree: 1, or dp × tp
	PP         int       `yaml:"pp,omitempty"`         // pipeline stages per instance, each on tp devices (pipeline.go)
	DPRouting  string    `yaml:"dp_routing,omitempty"` // balancer (vLLM picks the rank) | router (the router does)
	Precision  Precision `yaml:"precision,omitempty"`  // the formats this pool serves the model in (precision.go)
	Owner      string    `yaml:"owner,omitempty"`      // who answers for this pool's time
	Engine     Engine    `yaml:"engine"`
	Preemption string    `yaml:"preemption"` // recompute | swap | reject; none on a wafer pool
	Swap       *Swap     `yaml:"swap,omitempty"`
	Reject     *Reject   `yaml:"reject,omitempty"`
	Claims     []string  `yaml:"claims,omitempty"` // "transfer", "router": this pool's owner answers for them
	// Prefill pools: how KV no decoder pulled is freed (handoff.go; the
	// older spelling kv_hold_timeout: d is kv_hold: {mode: timeout,
	// timeout: d}), whether a decoder's refusal before admission frees it
	// at once, and streaming it layer by layer during the last prefill
	// step. Decode pools: what a lost KV source does, and llm-d's
	// decode-first flow.
	KVHold              *KVHold         `yaml:"kv_hold,omitempty"`
	KVHoldTimeout       *units.Duration `yaml:"kv_hold_timeout,omitempty"`
	NotifyRejected      *bool           `yaml:"notify_rejected,omitempty"`
	StreamKV            bool            `yaml:"stream_kv,omitempty"`
	KVLoadFailurePolicy string          `yaml:"kv_load_failure_policy,omitempty"` // recompute | fail
	DecodeFirst         *DecodeFirst    `yaml:"decode_first,omitempty"`
	StepTime            StepTime        `yaml:"step_time"`
	Placement           *Placement      `yaml:"placement,omitempty"`   // with a topology only
	Wafer               *WaferPool      `yaml:"wafer,omitempty"`       // wafer hardware only (wafer.go)
	KVTiers             []KVTier        `yaml:"kv_tiers,omitempty"`    // lower KV tiers below HBM, in order (tiers.go)
	KVHandoff           string          `yaml:"kv_handoff,omitempty"`  // prefill pools: direct (the decoder pulls from here) | store (through the kv_store)
	Autoscale           *Autoscale      `yaml:"autoscale,omitempty"`   // sized while the run goes on (autoscale.go)
	Speculative         *Speculative    `yaml:"speculative,omitempty"` // speculative decoding (speculative.go)
	// ContextLengthRange is [min, max], the prompt lengths in tokens the
	// pool is deployed for, as llm-d labels its pods
	// (llm-d.ai/context-length-range): what llm-d's context-length-aware
	// scorer reads (contextrange.go). Absent: none.
	ContextLengthRange []int `yaml:"context_length_range,omitempty"`
}

// Swap sizes a pool's host-memory tier for the swap preemption policy.
type Swap struct {
	HostMemory    units.Bytes     `yaml:"host_memory"`              // per instance
	HostBandwidth units.Bandwidth `yaml:"host_bandwidth,omitempty"` // per device, each direction; 0 = pcie-gen5-x16
}

// Reject configures the reject preemption policy (vLLM RFC #24256).
type Reject struct {
	CacheHitThreshold float64 `yaml:"cache_hit_threshold"` // least cached share of its context a preempted request needs
	Phase             int     `yaml:"phase"`               // 1: re-run the request; 2: re-send it with its delivered tokens
}

// Metrics tunes what the run reports.
type Metrics struct {
	LockupThreshold units.Duration `yaml:"lockup_threshold"` // a spell without progress this long is a lock-up (deadlock, preemption loop, pinned)
	LockupAbort     units.Duration `yaml:"lockup_abort"`     // locked up (any kind) this long: its requests fail
}

// Engine holds the vLLM engine limits of a pool's instances, and the
// release whose scheduling rules they follow (release.go), each of which
// may also be set on its own.
type Engine struct {
	Kind            string   `yaml:"kind,omitempty"`             // vllm | sglang | trtllm (enginekind.go)
	VLLM            string   `yaml:"vllm,omitempty"`             // release preset: "0.10" … "0.33", or latest
	Admission       string   `yaml:"admission,omitempty"`        // first_chunk | full_sequence (vllm); new_token_ratio (sglang); reserve_output | first_chunk (trtllm)
	ReserveInflight *bool    `yaml:"reserve_inflight,omitempty"` // async loads leave the blocks running prefills need
	DeferredFree    *bool    `yaml:"deferred_free,omitempty"`    // frees wait for the step in flight (async, KV consumers)
	FencedVictim    string   `yaml:"fenced_victim,omitempty"`    // cascade | wait
	Watermark       *float64 `yaml:"watermark,omitempty"`        // share of the pool admission keeps free while any request runs
	// HybridKVWithConnector: a prefill or decode pool (beside vLLM's KV
	// connector) keeps a hybrid model's sliding-window KV to its window;
	// false, every layer keeps every token (vLLM before 0.23).
	HybridKVWithConnector *bool   `yaml:"hybrid_kv_with_connector,omitempty"`
	MaxNumBatchedTokens   int     `yaml:"max_num_batched_tokens"`
	MaxNumSeqs            int     `yaml:"max_num_seqs"`
	BlockSize             int     `yaml:"block_size"`
	MemoryUtilization     float64 `yaml:"memory_utilization"` // share of device memory for weights + KV
	MaxModelLen           int     `yaml:"max_model_len"`      // 0 = the model's context length
	RemoteKVQueue         string  `yaml:"remote_kv_queue"`    // separate (today's vLLM) | shared (earlier vLLM)
	PrefixCaching         *bool   `yaml:"prefix_caching"`
	ChunkedPrefill        *bool   `yaml:"chunked_prefill"`
	AsyncScheduling       *bool   `yaml:"async_scheduling"` // vLLM's default since v0.14: plan step k+1 while step k runs
	// SchedulingPolicy is vLLM's --scheduling-policy: fcfs (omitted) or
	// priority, which serves the workload's classes by their priority.
	SchedulingPolicy string `yaml:"scheduling_policy,omitempty"`
}

// StepTime chooses and tunes the step-time model of a pool. Each model's
// fields are its own (models/perf: RooflineSpec, ProfileFile), inlined in
// the section; steptime.go registers the models by name.
type StepTime struct {
	Model             string           `yaml:"model"` // roofline | polynomial | table; wafer on a wafer pool
	perf.RooflineSpec `yaml:",inline"` // roofline (and wafer): factor overrides
	perf.ProfileFile  `yaml:",inline"` // polynomial, table: the profile read
}

// Link names the link kind that joins prefill and decode instances, with
// optional overrides of its catalog figures.
type Link struct {
	Kind      string          `yaml:"kind"`
	Bandwidth units.Bandwidth `yaml:"bandwidth,omitempty"` // per direction; 0 = catalog
	Latency   *units.Duration `yaml:"latency,omitempty"`
}

// Router chooses the routing policy and its knobs: one section per policy
// that has any, of the policy's own configuration type (router.go
// registers the policies).
type Router struct {
	Policy          string                      `yaml:"policy"`           // round_robin | least_loaded | power_of_two | dynamo | llmd | topology_aware | sglang
	From            string                      `yaml:"from,omitempty"`   // an llm-d EndpointPickerConfig or Dynamo flags file, read as the llmd or dynamo section (routerfrom.go)
	RefreshInterval units.Duration              `yaml:"refresh_interval"` // instance state seen by the router; 0 = always current (written out even at 0: llmd's default is not)
	Dynamo          *router.DynamoConfig        `yaml:"dynamo,omitempty"`
	LLMD            *router.LLMDConfig          `yaml:"llmd,omitempty"`
	TopologyAware   *router.TopologyAwareConfig `yaml:"topology_aware,omitempty"` // reads dynamo's too
	SGLang          *router.SGLangConfig        `yaml:"sglang,omitempty"`
}

// Catalog extends the built-in catalogs: files to merge (resolved against
// the scenario's folder) and inline entries, which win over both.
type Catalog struct {
	Files        []string                   `yaml:"files,omitempty"`
	Accelerators []hardware.AcceleratorSpec `yaml:"accelerators,omitempty"`
	Links        []hardware.LinkSpec        `yaml:"links,omitempty"`
	Models       []llm.Spec                 `yaml:"models,omitempty"`
}
