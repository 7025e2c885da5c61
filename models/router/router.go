// Package router holds the routing policies: given a request and a view of
// the instances, choose where its prefill runs and, in a disaggregated
// cluster, where it decodes. Routers are deterministic state machines; any
// randomness comes from a *rand.Rand they are given.
//
// Each policy's configuration (DynamoConfig, LLMDConfig,
// TopologyAwareConfig) is also its section of a scenario's router block:
// YAML-tagged fields, a Default value that fills what a file leaves out,
// and Check, whose errors name the field relative to the section. The
// scenario layer registers the policies (scenarios/router.go). A policy
// that reads the prompts' block hashes says so as a HashUser.
package router

import "handoff/models/kv"

// View is what a router sees of one instance. Waiting, Running and the
// block counts are copied from the instance at each refresh (stale by
// design when the refresh interval is not 0); the Active* counters and
// Outstanding are the router's own bookkeeping of what it routed, and are
// always current.
type View struct {
	Index            int // instance index in the cluster
	Waiting          int // requests waiting, for admission or for remote KV (vLLM's num_requests_waiting, at the last refresh)
	Running          int // sequences in the running set (at the last refresh)
	FreeBlocks       int // KV blocks allocatable (at the last refresh)
	TotalBlocks      int
	BlockSize        int
	MaxBatchedTokens int // the instance's token budget per step

	Outstanding         int // requests routed here and not yet finished here
	Routed              int // requests routed here, to prefill or to decode, and not yet finished anywhere: a prefiller's count its prefills until they finish decoding elsewhere
	ActivePrefillTokens int // uncached prompt tokens routed here whose prefill has not finished
	ActiveBlocks        int // full KV blocks of requests routed here to decode, until they finish (shared ones once, see Cluster.NewBlocks); for an OutputBlockCounter, also the blocks their output filled, at the last refresh
	TokenLoad           int // EstimatedTokens of the requests routed here: on a remote prefiller until their prefill ends, where they decode until they finish
}

// KVUsage is the share of the instance's KV blocks in use at the last
// refresh, in [0, 1].
func (v *View) KVUsage() float64 {
	if v.TotalBlocks == 0 {
		return 0
	}
	return 1 - float64(v.FreeBlocks)/float64(v.TotalBlocks)
}

// Request is what a router knows of a request.
type Request struct {
	ID           int64
	Priority     int // its traffic class's priority, lower first (as vLLM's priority policy); 0 without classes
	PromptTokens int
	OutputTokens int
	Prefix       []kv.Segment
	Hashes       []uint64 // chained hashes of the prompt's full blocks (Cluster.BlockSize tokens each)
	// Session and Turn identify a multi-turn conversation's request, as a
	// client's session header or id does (llm-d's x-session-token,
	// Dynamo's session affinity id): Turn counts from 1, and 0 means the
	// request belongs to no session.
	Session int32
	Turn    uint16
}

// InSession reports whether r belongs to a session.
func (r *Request) InSession() bool { return r.Turn > 0 }

// Cluster is the routing view: the instances that can run a prefill
// (prefill or colocated role) and, when disaggregated, those that decode,
// plus what the router can ask of the cluster.
type Cluster struct {
	Prefill   []View
	Decode    []View // empty when the cluster is colocated
	NowNs     int64
	BlockSize int // tokens per block of Request.Hashes

	// Overlap is how many leading blocks of hashes instance i holds in its
	// prefix cache, as KV events would report them (current).
	Overlap func(i int, hashes []uint64) int
	// TierOverlap is how many blocks of hashes instance i holds in its
	// lower KV tiers past its first from (its device overlap), as the
	// tiers' KV events would report them: a run in its host tier from
	// from on, then a run in its disk from where that stopped, then one in
	// the store (Dynamo's lower-tier walk, query_lower_tiers). nil when no
	// instance has lower tiers.
	TierOverlap func(i int, hashes []uint64, from int) TierBlocks
	// OnboardNs predicts the time to copy blocks up from instance i's
	// lower tiers now: the slowest tier's latency plus its bytes at the
	// rate a new read would get on its link. nil without tiers.
	OnboardNs func(i int, blocks TierBlocks) int64
	// TransferNs predicts the time to move bytes of KV from instance src to
	// dst over the current network: path latency plus bytes at the rate a new
	// transfer would get now. 0 when src == dst.
	TransferNs func(src, dst int, bytes float64) int64
	// KVBytes is the KV a transfer of tokens prompt tokens moves into
	// decoder dst.
	KVBytes func(dst, tokens int) float64
	// NewBlocks, when the cluster counts blocks that active requests share
	// once (Dynamo's router_assume_kv_reuse, colocated), is how many of r's
	// full prompt blocks no request active on instance i holds; nil
	// otherwise.
	NewBlocks func(i int, r *Request) int

	// ContextRange is the prompt lengths in tokens instance i is deployed
	// for, [lo, hi] (llm-d's context-length-range pod label); ok is false
	// for an instance without one. nil when no instance has one.
	ContextRange func(i int) (lo, hi int, ok bool)

	// Caching, when not nil, appends to dst every instance whose device
	// cache holds the first block of hashes — every i with Overlap(i,
	// hashes) > 0 — and perhaps a few others, in no particular order, so
	// that a router need not ask every instance. nil: any instance may.
	Caching func(dst []int, hashes []uint64) []int
	// Sharing, when not nil, appends to dst every instance with an active
	// request sharing r's prompt prefix — every i with NewBlocks(i, r)
	// below r's full blocks — and perhaps a few others. nil with
	// NewBlocks: any instance may.
	Sharing func(dst []int, r *Request) []int
}

// leg is c's decode leg (decode) or its prefill leg.
func (c *Cluster) leg(decode bool) []View {
	if decode {
		return c.Decode
	}
	return c.Prefill
}

// TierBlocks counts blocks per lower KV tier: host, disk, store.
type TierBlocks [3]int

// Sum is the blocks over all the tiers.
func (t TierBlocks) Sum() int { return t[0] + t[1] + t[2] }

// Decision is a placement: instance indexes for each leg. Decode is -1 when
// the prefill instance also decodes (colocated, or a disaggregated cluster
// prefilling locally on the chosen decoder), and DecodeLater when the
// router picks the decoder once the prefill is done (a DecodeRouter).
// Prefill -1 holds the request at the router; it is offered again when
// routed work finishes (and, for a Poller, every PollNs), in the order the
// router keeps (a Queuer) or the order it was held. PrefillCached is how many prompt tokens the router
// expects the prefill instance to find cached: its active prefill load
// counts only the rest.
type Decision struct {
	Prefill       int
	Decode        int
	PrefillCached int
	Reason        string // why a rejected request ends (Rejected); "" otherwise
}

// DecodeLater in Decision.Decode defers the decoder's choice to the end of
// the prefill (DecodeRouter.RouteDecode).
const DecodeLater = -2

// DecodeRouter is a Router that may choose a request's decoder when its
// prefill is done rather than at arrival, as Dynamo's router does on
// vLLM's and TensorRT-LLM's disaggregated paths.
type DecodeRouter interface {
	Router
	// RouteDecode returns the instance index that decodes r.
	RouteDecode(r *Request, c *Cluster) int
}

// Rejected in Decision.Prefill refuses the request: the core ends it
// rejected, never served, as a frontend answering "every worker is busy"
// does (Dynamo's busy thresholds).
const Rejected = -3

// Held reports whether the decision keeps the request at the router.
func (d Decision) Held() bool { return d.Prefill < 0 && d.Prefill != Rejected }

// IsRejected reports whether the decision refuses the request.
func (d Decision) IsRejected() bool { return d.Prefill == Rejected }

// The reasons the routers give a rejection (Decision.Reason).
const (
	ReasonBusy  = "rejected by the router: every worker is past its busy thresholds"
	ReasonNoFit = "rejected by the router: no candidate's context-length range holds the prompt"
)

// rejected is the decision that refuses a request, for a reason.
func rejected(reason string) Decision { return Decision{Prefill: Rejected, Decode: -1, Reason: reason} }

// Router places requests.
type Router interface {
	Route(r *Request, c *Cluster) Decision
}

// HashUser is a Router that reads Request.Hashes — the prefix-aware ones.
// The core computes a request's block hashes only for a router that says
// it uses them, as an http.ResponseWriter says it flushes by being an
// http.Flusher.
type HashUser interface {
	UsesHashes() bool
}

// UsesHashes reports whether r reads Request.Hashes.
func UsesHashes(r Router) bool {
	h, ok := r.(HashUser)
	return ok && h.UsesHashes()
}

// OutputBlockCounter is a Router whose bookkeeping counts, in a decoding
// instance's View.ActiveBlocks, the blocks its requests' output has filled
// past their prompts' last (Dynamo's router_track_output_blocks): the core
// counts them from the instances at each refresh of the views, so such a
// router must read the instances' state (InstanceStateReader).
type OutputBlockCounter interface {
	CountsOutputBlocks() bool
}

// CountsOutputBlocks reports whether r's bookkeeping counts output blocks.
func CountsOutputBlocks(r Router) bool {
	o, ok := r.(OutputBlockCounter)
	return ok && o.CountsOutputBlocks()
}

// StateReader is a Router that says whether it reads its views' state:
// every View field but Index (instance state and the router's
// bookkeeping alike). The core keeps those fields current only for a
// router that reads them, so that a policy which needs no more than the
// candidates' indexes (RoundRobin) costs nothing per instance per
// decision. A Router that does not implement StateReader reads them.
type StateReader interface {
	ReadsState() bool
}

// ReadsState reports whether r reads its views' state.
func ReadsState(r Router) bool {
	s, ok := r.(StateReader)
	return !ok || s.ReadsState()
}

// InstanceStateReader is a StateReader that says whether, of its views'
// state, it reads what they copy from the instances at each refresh
// (Waiting, Running, FreeBlocks) or only the router's bookkeeping
// (Outstanding, ActivePrefillTokens, ActiveBlocks). The core reads the
// instances only for a router that reads them; for one that reads only
// the bookkeeping it brings up to date only the views whose bookkeeping
// changed. A Router that does not implement InstanceStateReader reads
// them, if it reads any state (StateReader).
type InstanceStateReader interface {
	ReadsInstanceState() bool
}

// ReadsInstanceState reports whether r reads the instance state its views
// copy at each refresh.
func ReadsInstanceState(r Router) bool {
	s, ok := r.(InstanceStateReader)
	return ReadsState(r) && (!ok || s.ReadsInstanceState())
}

// Indexer is a Router that keeps indexes over its views, so that a
// decision costs O(log n) in the fleet's size rather than a scan of every
// view. Whoever changes the views keeps the indexes current: Reindex
// after listing or filling them anew (Cluster.Prefill and Cluster.Decode),
// Changed after changing one view's fields. A router that was never
// reindexed scans its views, as the policy defines its choice; its
// indexed choice is tested against that scan.
type Indexer interface {
	Router
	// Reindex builds the indexes from c's views. Cost O(n log n).
	Reindex(c *Cluster)
	// Changed updates the indexes for the view at position k of c.Decode
	// (decode) or of c.Prefill. Cost O(log n).
	Changed(c *Cluster, decode bool, k int)
}

// RouterFunc adapts a function to Router.
type RouterFunc func(r *Request, c *Cluster) Decision

// Route calls f(r, c).
func (f RouterFunc) Route(r *Request, c *Cluster) Decision { return f(r, c) }
