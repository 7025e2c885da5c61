package router

import "math/rand/v2"

// Dynamo is Dynamo's KV router. Colocated, each worker is priced by the
// full cost. Disaggregated, the prefill leg is priced by the full cost over
// the prefillers, and the decoder is chosen when the prefill is done
// (RouteDecode), by load alone (active blocks + R + request weight ·
// outstanding), as Dynamo does on vLLM's and TensorRT-LLM's paths
// (docs/design_docs/disagg_serving.md); with conditional disaggregation a
// decoder is first peeked by the full cost and the request may prefill on
// it.
//
// Reindexed (Indexer), it keeps each leg's workers ordered by their cost
// without a prefix (dynamoindex.go): at temperature 0 a choice prices the
// workers a prompt's prefix may count on and the cheapest of the rest.
type Dynamo struct {
	cfg      DynamoConfig
	ch       chooser
	index    *TTLIndex // nil with KV events
	costs    []float64
	overlaps []int        // device overlap blocks of the candidates last priced
	ix       *dynamoIndex // nil until reindexed
	peeked   peek         // the prefiller a conditional decision peeked, this request
	scan     bool         // this decision scans its legs: they are cut to the free workers (the indexes cover the whole legs)

	free                    Cluster // scratch: the cluster cut to its free workers
	freePrefill, freeDecode []View
	sessions                [2]sessionBindings // session affinity: the prefill (or colocated) leg's, the decode leg's
}

// NewDynamo returns the router; randomness (ties, temperature) comes from
// rng. Panics on a configuration the scenario loader would reject.
func NewDynamo(cfg DynamoConfig, rng *rand.Rand) *Dynamo {
	if cfg.Temperature < 0 || rng == nil {
		panic("router: Dynamo needs temperature ≥ 0 and a random stream")
	}
	if w := cfg.KVOverlapScoreWeight; w != nil {
		cfg.ApplyKVOverlapScoreWeight(*w)
	}
	d := &Dynamo{cfg: cfg, ch: chooser{rng: rng}, sessions: [2]sessionBindings{{}, {}}}
	if !cfg.UseKVEvents {
		d.index = NewTTLIndex(int64(cfg.TTL))
	}
	return d
}

// CountsOutputBlocks implements OutputBlockCounter
// (router_track_output_blocks).
func (d *Dynamo) CountsOutputBlocks() bool { return d.cfg.TrackOutputBlocks }

// held returns the decision that keeps a request at the router.
func held() Decision { return Decision{Prefill: -1, Decode: -1} }

// UsesHashes implements HashUser: it reads the prompt's block hashes.
func (*Dynamo) UsesHashes() bool { return true }

// RouteDecode implements DecodeRouter: the decoder by load alone, once
// the prefill is done.
func (d *Dynamo) RouteDecode(r *Request, c *Cluster) int {
	if v := d.pinned(r, c, true); v != nil {
		d.bind(r, c, true, v.Index)
		d.record(r, c, v.Index)
		return v.Index
	}
	if d.cfg.busyConfigured() {
		c = d.freeDecoders(c)
		d.scan = true
		defer func() { d.scan = false }()
	}
	dec := c.Decode[d.pickDecode(r, c)].Index
	d.bind(r, c, true, dec)
	d.record(r, c, dec)
	return dec
}

// holds reports whether every prefill candidate is past the queue
// threshold.
func (d *Dynamo) holds(c *Cluster) bool {
	if d.cfg.QueueThreshold <= 0 {
		return false
	}
	if d.ix != nil && !d.scan {
		return d.ix.legs[0].under == 0
	}
	vs := c.Prefill
	for i := range vs {
		if float64(vs[i].ActivePrefillTokens) <= d.cfg.QueueThreshold*float64(vs[i].MaxBatchedTokens) {
			return false
		}
	}
	return true
}

// pick returns the position in the decode leg (decode) or the prefill
// leg of the worker the full cost chooses, and its device overlap.
func (d *Dynamo) pick(r *Request, c *Cluster, decode bool) (k, overlap int) {
	if d.indexable(r, c) {
		return d.pickIndexed(r, c, decode)
	}
	d.costs = d.prefillCosts(d.costs[:0], r, c, c.leg(decode))
	k = d.ch.minCost(d.costs, d.cfg.Temperature)
	return k, d.overlaps[k]
}

// cachedTokens is the prompt tokens a worker holding overlap of the
// prompt's blocks holds.
func cachedTokens(r *Request, c *Cluster, overlap int) int {
	return min(r.PromptTokens, overlap*c.BlockSize)
}

// pickDecode returns the position in c.Decode of the chosen decoder.
func (d *Dynamo) pickDecode(r *Request, c *Cluster) int {
	if d.ix != nil && !d.scan && d.cfg.Temperature == 0 {
		return d.pickDecodeIndexed(r, c)
	}
	d.costs = d.decodeCosts(d.costs[:0], r, c.Decode, c.BlockSize)
	return d.ch.minCost(d.costs, d.cfg.Temperature)
}

// prefillCosts appends the full cost of each worker of vs, and keeps
// their device overlaps in d.overlaps.
func (d *Dynamo) prefillCosts(dst []float64, r *Request, c *Cluster, vs []View) []float64 {
	minActive := vs[0].ActivePrefillTokens
	for i := range vs {
		minActive = min(minActive, vs[i].ActivePrefillTokens)
	}
	d.overlaps = d.overlaps[:0]
	for i := range vs {
		overlap := d.overlap(r, c, vs[i].Index)
		d.overlaps = append(d.overlaps, overlap)
		dst = append(dst, d.fullCost(r, c, &vs[i], overlap, minActive))
	}
	return dst
}

// fullCost is worker v's full cost for r, given its device overlap and
// the least active prefill tokens of its leg.
func (d *Dynamo) fullCost(r *Request, c *Cluster, v *View, overlap, minActive int) float64 {
	b := float64(c.BlockSize)
	decay := 1.0
	if reqBlocks := r.PromptTokens / c.BlockSize; reqBlocks > 0 {
		excess := float64(v.ActivePrefillTokens-minActive) / b
		decay = 1 / (1 + d.cfg.OverlapScoreCreditDecay*excess/float64(reqBlocks))
	}
	credit := d.cfg.OverlapScoreCredit*decay*float64(overlap) + d.tierCredit(r, c, v.Index, overlap)
	prefill := max(0, float64(v.ActivePrefillTokens+r.PromptTokens)/b-credit)
	return d.cfg.PrefillLoadScale*prefill + d.loadCost(v, d.newBlocks(r, c, v))
}

// decodeCosts appends the load-only cost of each decoder of vs: Dynamo's
// decode router gives no overlap credit and assumes no reuse.
func (d *Dynamo) decodeCosts(dst []float64, r *Request, vs []View, blockSize int) []float64 {
	reqBlocks := r.PromptTokens / blockSize
	for i := range vs {
		dst = append(dst, d.loadCost(&vs[i], reqBlocks))
	}
	return dst
}

// newBlocks is the request's full blocks a worker would add to its decode
// load: all of them, or with AssumeKVReuse those no active request there
// holds.
func (d *Dynamo) newBlocks(r *Request, c *Cluster, v *View) int {
	if d.cfg.AssumeKVReuse && c.NewBlocks != nil {
		return c.NewBlocks(v.Index, r)
	}
	return r.PromptTokens / c.BlockSize
}

// loadCost is the decode part of the cost: potential decode blocks plus
// the active-request term.
func (d *Dynamo) loadCost(v *View, newBlocks int) float64 {
	return float64(v.ActiveBlocks+newBlocks) + d.cfg.DecodeActiveRequestWeight*float64(v.Outstanding)
}

// overlap is the number of leading prompt blocks instance inst holds on
// device: from its cache (KV events) or the router's own index.
func (d *Dynamo) overlap(r *Request, c *Cluster, inst int) int {
	if len(r.Hashes) == 0 {
		return 0
	}
	if d.index != nil {
		return d.index.Overlap(inst, r.Hashes, c.NowNs)
	}
	return c.Overlap(inst, r.Hashes)
}

// tierCredit is the host, disk and shared-store part of a worker's
// credit: its lower tiers' runs past its device overlap, weighted. Dynamo
// credits the shared store apart from the disk, by shared_cache_multiplier
// (worker_logit, selector/default.rs).
func (d *Dynamo) tierCredit(r *Request, c *Cluster, inst, overlap int) float64 {
	if c.TierOverlap == nil || len(r.Hashes) == 0 || d.index != nil { // tiers are known from KV events only
		return 0
	}
	t := c.TierOverlap(inst, r.Hashes, overlap)
	return d.cfg.HostCacheHitWeight*float64(t[0]) + d.cfg.DiskCacheHitWeight*float64(t[1]) +
		d.cfg.SharedCacheMultiplier*float64(t[2])
}

// record teaches the router's own index (if any) that inst will hold the
// request's blocks.
func (d *Dynamo) record(r *Request, c *Cluster, inst int) {
	if d.index != nil {
		d.index.Record(inst, r.Hashes, c.NowNs)
	}
}
