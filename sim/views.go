package sim

import (
	"fmt"
	"slices"

	"handoff/models/kv"
	"handoff/models/router"
)

// routing is the router's side of the cluster: the views it decides from,
// refreshed every Config.RefreshIntervalNs (0: before every decision), its
// own bookkeeping of what it routed, and requests it holds.
//
// The views' bookkeeping is brought up to date where it changed: each
// change marks its instance (loadChanged), and before a decision only the
// marked views are filled, and told to a router that keeps indexes over
// them (router.Indexer), so that a decision costs what the router's
// choice costs rather than a pass over every instance. The instances'
// state is read at each refresh, into every view, only for a router that
// reads it (router.ReadsInstanceState).
type routing struct {
	view           router.Cluster
	lastRefreshNs  int64
	refreshed      bool
	joined         bool    // an instance became ready since the last refresh (fleet.go)
	held           []int32 // flights the router holds, from heldFrom on (see retryHeld)
	heldFrom       int
	hashes         []uint64 // scratch: the routed request's block hashes
	hashesUsed     bool     // the router reads them (router.HashUser)
	stateRead      bool     // the router reads the views' state (router.StateReader)
	instanceRead   bool     // of it, the instances' (router.ReadsInstanceState)
	outputsCounted bool     // its bookkeeping counts output blocks (router.CountsOutputBlocks)
	request        router.Request

	// The order of the held requests and the router's polls (heldorder.go).
	heldKeys    []int64       // with an ordering router, each held flight's key
	queuer      router.Queuer // the router, when it orders its held requests; nil: held in order
	pollNs      int64         // the router's poll interval (router.Poller); 0: none
	pollPending bool          // a poll is scheduled
	polling     bool          // a poll is offering the held requests

	indexer  router.Indexer // the router, when it keeps indexes over the views; nil: it scans
	slots    []int32        // per instance: its view's position in its leg's list, −1 while not listed
	changed  []int32        // instances whose bookkeeping changed since their views were filled
	marked   []bool         // per instance: in changed
	relisted bool           // the lists changed since the router was last reindexed
	filled   int64          // views filled, in all: what decisions cost in instances visited

	// capacityTokens is the most context any instance of the leg that
	// holds a request's whole context can take (legFor): instances'
	// engines never change, so neither does it.
	capacityTokens int
}

// indexFrom is the fewest instances for which the core keeps a router's
// indexes (router.Indexer): in a smaller fleet a scan of the views costs
// less than keeping them (BenchmarkRouterChoice).
const indexFrom = 64

func (c *cluster) initRouting() {
	r := &c.routing
	r.view = router.Cluster{Prefill: make([]router.View, 0, len(c.prefillIdx)),
		Decode: make([]router.View, 0, len(c.decodeIdx)), KVBytes: c.kvBytes,
		BlockSize: c.cfg.Instances[0].Engine.BlockSize}
	r.view.Overlap = func(i int, hashes []uint64) int { return c.engine(i).Pool().Peek(hashes) }
	c.initHeldOrder()
	r.hashesUsed = router.UsesHashes(c.cfg.Router)
	r.stateRead = router.ReadsState(c.cfg.Router) || c.cfg.allViews || c.cfg.scanViews
	r.instanceRead = router.ReadsInstanceState(c.cfg.Router) || c.cfg.allViews || c.cfg.scanViews
	r.outputsCounted = router.CountsOutputBlocks(c.cfg.Router)
	ix, ok := c.cfg.Router.(router.Indexer)
	if ok && !c.cfg.scanViews && (len(c.replicas) >= indexFrom || c.cfg.indexAlways) {
		r.indexer = ix
	}
	r.slots, r.marked = make([]int32, len(c.replicas)), make([]bool, len(c.replicas))
	c.rebuildViews() // every instance ready at the start
	for _, i := range c.legFor(len(c.decodeIdx) > 0) {
		r.capacityTokens = max(r.capacityTokens, c.replicas[i].cfg.Engine.CapacityTokens())
	}
	r.view.TransferNs = c.predictTransferNs
	if c.cfg.hasTiers() {
		r.view.TierOverlap = func(i int, hashes []uint64, from int) router.TierBlocks {
			return router.TierBlocks(c.engine(i).TierRuns(hashes, from))
		}
		r.view.OnboardNs = c.predictOnboardNs
	}
	if c.cfg.RouterCountsSharedBlocks {
		r.view.NewBlocks = c.newBlocks
	}
	if slices.ContainsFunc(c.cfg.Instances, func(in Instance) bool { return in.ContextRange[1] > 0 }) {
		r.view.ContextRange = func(i int) (lo, hi int, ok bool) {
			cr := c.cfg.Instances[i].ContextRange
			return cr[0], cr[1], cr[1] > 0
		}
	}
}

// refreshViews brings the routing view up to date: the instances it lists
// and their state when the refresh interval has passed (for a router that
// reads it), the router's bookkeeping always, and the router's indexes
// with them. A router that reads no state (router.StateReader) sees only
// the list: its views' other fields are never filled.
func (c *cluster) refreshViews() {
	r := &c.routing
	stale := r.refreshed && c.nowNs-r.lastRefreshNs < c.cfg.RefreshIntervalNs
	if !stale {
		r.lastRefreshNs, r.refreshed = c.nowNs, true
		if r.joined {
			c.rebuildViews()
		}
	}
	r.view.NowNs = c.nowNs
	switch {
	case !r.stateRead:
	case c.cfg.scanViews || r.instanceRead && !stale:
		c.fillViews(stale)
	default:
		c.fillChanged()
	}
	if r.indexer != nil && r.relisted {
		r.indexer.Reindex(&r.view)
		r.relisted = false
	}
	if c.cfg.checkViews && r.stateRead {
		c.checkViewsCurrent()
	}
}

// fillViews fills every view: its instance's state unless stale, the
// router's bookkeeping. The router reindexes.
func (c *cluster) fillViews(stale bool) {
	r := &c.routing
	for _, vs := range [][]router.View{r.view.Prefill, r.view.Decode} {
		for k := range vs {
			if !stale {
				c.fillState(&vs[k], vs[k].Index)
			}
			c.fillLoad(&vs[k], vs[k].Index)
		}
	}
	c.unmark()
	r.relisted = true
}

// fillChanged fills the views whose bookkeeping changed and tells the
// router's indexes.
func (c *cluster) fillChanged() {
	r := &c.routing
	for _, i := range r.changed {
		k := r.slots[i]
		if k < 0 {
			continue // not listed
		}
		decode := c.replicas[i].cfg.Role == RoleDecode
		vs := r.view.Prefill
		if decode {
			vs = r.view.Decode
		}
		c.fillLoad(&vs[k], int(i))
		if r.indexer != nil && !r.relisted {
			r.indexer.Changed(&r.view, decode, int(k))
		}
	}
	c.unmark()
}

func (c *cluster) unmark() {
	r := &c.routing
	for _, i := range r.changed {
		r.marked[i] = false
	}
	r.changed = r.changed[:0]
}

// loadChanged notes that the router's bookkeeping of instance i changed,
// for its view to be filled before the next decision.
func (c *cluster) loadChanged(i int) {
	r := &c.routing
	if r.stateRead && !r.marked[i] {
		r.marked[i] = true
		r.changed = append(r.changed, int32(i))
	}
}

// fixView fills the parts of instance i's view that never change.
func (c *cluster) fixView(v *router.View, i int) {
	rp := &c.replicas[i]
	pool := rp.eng.Pool()
	*v = router.View{Index: i, TotalBlocks: pool.NumBlocks(), BlockSize: pool.BlockSize(),
		MaxBatchedTokens: rp.cfg.Engine.MaxBatchedTokens}
}

// fillState copies instance i's state into its view.
func (c *cluster) fillState(v *router.View, i int) {
	// Waiting counts requests waiting for remote KV too, as vLLM's
	// num_requests_waiting does (its skipped_waiting queue included).
	in := c.engine(i)
	v.Waiting, v.Running, v.FreeBlocks = in.Waiting()+in.Pulling(), in.Running(), in.Pool().FreeBlocks()
	if c.routing.outputsCounted {
		c.countOutputBlocks(i, in)
	}
}

// fillLoad copies the router's bookkeeping of instance i into its view.
func (c *cluster) fillLoad(v *router.View, i int) {
	c.routing.filled++
	rp := &c.replicas[i]
	v.Outstanding = rp.outstanding
	v.Routed = rp.outstanding
	switch rp.cfg.Role {
	case RoleDecode:
		// A decoder's are counted from routing, before the handoff
		// brings them: the router's bookkeeping, not the engine's.
		v.Outstanding, v.Routed = rp.routed, rp.routed
	case RolePrefill:
		v.Routed = rp.through
	}
	v.ActivePrefillTokens = rp.prefillTokens
	v.TokenLoad = rp.tokenLoad
	v.ActiveBlocks = rp.blocks + rp.outputBlocks
}

// checkViewsCurrent panics unless every view's bookkeeping is the
// replicas' (Config.checkViews).
func (c *cluster) checkViewsCurrent() {
	r := &c.routing
	for _, vs := range [][]router.View{r.view.Prefill, r.view.Decode} {
		for k := range vs {
			want := vs[k]
			c.fillLoad(&want, want.Index)
			if want != vs[k] || r.slots[want.Index] != int32(k) {
				panic(fmt.Sprintf("sim: the view of %s at %d is %+v, want %+v at %d (simulator bug)",
					c.cfg.Instances[want.Index].Name, k, vs[k], want, r.slots[want.Index]))
			}
		}
	}
}

// routeRequest builds the router's request for a flight's current attempt.
func (c *cluster) routeRequest(r *Request) *router.Request {
	rq := &c.routing.request // reused: routers must not keep it
	*rq = router.Request{ID: r.ID, Priority: c.priority(r), PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens,
		Prefix: r.Prefix, Session: r.Session, Turn: r.Turn}
	if c.routing.hashesUsed {
		b := c.routing.view.BlockSize
		c.routing.hashes = kv.AppendBlockHashes(c.routing.hashes[:0], r.Prefix, uint64(r.ID)+1, r.PromptTokens, b)
		rq.Hashes = c.routing.hashes
	}
	return rq
}

// predictTransferNs prices a KV transfer for a router (0 within an instance).
func (c *cluster) predictTransferNs(src, dst int, bytes float64) int64 {
	if src == dst || c.net == nil {
		return 0
	}
	var latencyNs int64
	c.pathScratch, latencyNs = c.cfg.Topology.AppendPath(c.pathScratch[:0], src, dst)
	return c.net.PredictNs(c.pathScratch, latencyNs, bytes)
}

// tooLong explains why no instance of the cluster could ever serve r, or
// returns "".
func (c *cluster) tooLong(r *Request) string {
	need, best := r.PromptTokens+r.OutputTokens, c.routing.capacityTokens
	if need > best {
		return fmt.Sprintf("too long: %d tokens (prompt %d + output %d) exceed the %d any instance can hold",
			need, r.PromptTokens, r.OutputTokens, best)
	}
	return ""
}

// legFor returns the instances that must hold a request's whole context:
// the decoders when disaggregated, else the colocated instances.
func (c *cluster) legFor(disaggregated bool) []int {
	if disaggregated {
		return c.decodeIdx
	}
	return c.prefillIdx
}

// doesNotFit explains why the routed instances cannot hold r, or returns "".
func (c *cluster) doesNotFit(r *Request, d router.Decision) string {
	p := c.cfg.Instances[d.Prefill]
	if d.Decode == -1 {
		if capTokens := p.Engine.CapacityTokens(); r.PromptTokens+r.OutputTokens > capTokens {
			return fmt.Sprintf("too long for %s: %d tokens exceed its %d", p.Name, r.PromptTokens+r.OutputTokens, capTokens)
		}
		return ""
	}
	if capTokens := p.Engine.CapacityTokens(); r.PromptTokens+1 > capTokens {
		return fmt.Sprintf("too long for %s: prompt of %d tokens exceeds its %d", p.Name, r.PromptTokens, capTokens)
	}
	if d.Decode == router.DecodeLater {
		return "" // checked when the decoder is chosen
	}
	return c.doesNotFitDecoder(r, d.Decode)
}

// doesNotFitDecoder explains why decoder d cannot hold r, or returns "".
func (c *cluster) doesNotFitDecoder(r *Request, d int) string {
	dc := c.cfg.Instances[d]
	if capTokens := dc.Engine.CapacityTokens(); r.PromptTokens+r.OutputTokens > capTokens {
		return fmt.Sprintf("too long for %s: %d tokens exceed its %d", dc.Name, r.PromptTokens+r.OutputTokens, capTokens)
	}
	return ""
}
