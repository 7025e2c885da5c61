package sim

import (
	"fmt"

	"handoff/models/kv"
	"handoff/models/router"
)

// routing is the router's side of the cluster: the views it decides from,
// refreshed every Config.RefreshIntervalNs (0: before every decision), its
// own bookkeeping of what it routed, and requests it holds.
type routing struct {
	view          router.Cluster
	lastRefreshNs int64
	refreshed     bool
	joined        bool    // an instance became ready since the last refresh (fleet.go)
	held          []int32 // flights the router holds, from heldFrom on (see retryHeld)
	heldFrom      int
	hashes        []uint64 // scratch: the routed request's block hashes
	hashesUsed    bool     // the router reads them (router.HashUser)
	stateRead     bool     // the router reads the views' state (router.StateReader)
	request       router.Request

	// capacityTokens is the most context any instance of the leg that
	// holds a request's whole context can take (legFor): instances'
	// engines never change, so neither does it.
	capacityTokens int
}

func (c *cluster) initRouting() {
	r := &c.routing
	r.view = router.Cluster{Prefill: make([]router.View, 0, len(c.prefillIdx)),
		Decode: make([]router.View, 0, len(c.decodeIdx)), KVBytes: c.kvBytes,
		BlockSize: c.cfg.Instances[0].Engine.BlockSize}
	c.rebuildViews() // every instance ready at the start
	r.view.Overlap = func(i int, hashes []uint64) int { return c.engine(i).Pool().Peek(hashes) }
	r.hashesUsed = router.UsesHashes(c.cfg.Router)
	r.stateRead = router.ReadsState(c.cfg.Router) || c.cfg.allViews
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
}

// refreshViews brings the routing view up to date: the instances it lists
// and their state when the refresh interval has passed, the router's
// bookkeeping always. A router that reads no state (router.StateReader)
// sees only the list: its views' other fields are never filled.
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
	if !r.stateRead {
		return
	}
	for k := range r.view.Prefill {
		c.fillView(&r.view.Prefill[k], r.view.Prefill[k].Index, stale)
	}
	for k := range r.view.Decode {
		c.fillView(&r.view.Decode[k], r.view.Decode[k].Index, stale)
	}
}

// fixView fills the parts of instance i's view that never change.
func (c *cluster) fixView(v *router.View, i int) {
	rp := &c.replicas[i]
	pool := rp.eng.Pool()
	*v = router.View{Index: i, TotalBlocks: pool.NumBlocks(), BlockSize: pool.BlockSize(),
		MaxBatchedTokens: rp.cfg.Engine.MaxBatchedTokens}
}

// fillView brings instance i's view up to date: its state unless the view
// is stale, the router's bookkeeping always.
func (c *cluster) fillView(v *router.View, i int, stale bool) {
	rp := &c.replicas[i]
	if !stale {
		// Waiting counts requests waiting for remote KV too, as vLLM's
		// num_requests_waiting does (its skipped_waiting queue included).
		in := c.engine(i)
		v.Waiting, v.Running, v.FreeBlocks = in.Waiting()+in.Pulling(), in.Running(), in.Pool().FreeBlocks()
	}
	v.Outstanding = rp.outstanding
	if rp.cfg.Role == RoleDecode {
		// A decoder's are counted from routing, before the handoff
		// brings them: the router's bookkeeping, not the engine's.
		v.Outstanding = rp.routed
	}
	v.ActivePrefillTokens = rp.prefillTokens
	v.ActiveBlocks = rp.blocks
}

// routeRequest builds the router's request for a flight's current attempt.
func (c *cluster) routeRequest(r *Request) *router.Request {
	rq := &c.routing.request // reused: routers must not keep it
	*rq = router.Request{ID: r.ID, PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens, Prefix: r.Prefix}
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
