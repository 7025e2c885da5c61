package router

import "math/rand/v2"

// DynamoConfig holds the knobs of Dynamo's KV router cost. Per candidate
// worker w, with block size B, prompt length ISL and request blocks
// R = ⌈ISL/B⌉:
//
//	cost_w   = PrefillLoadScale · max(0, (active_prefill_tokens_w + ISL)/B − credit_w)
//	         + (active_blocks_w + R) + DecodeActiveRequestWeight · outstanding_w
//	credit_w = OverlapScoreCredit · decay_w · device_overlap_blocks_w
//	         + HostCacheHitWeight · host_overlap_w + DiskCacheHitWeight · disk_overlap_w
//	decay_w  = 1 / (1 + OverlapScoreCreditDecay · ((active_prefill_w − min_v active_prefill_v)/B) / R)
//
// This simulator has no host or disk prefix tiers, so host_overlap and
// disk_overlap are always 0 and their weights have no effect.
type DynamoConfig struct {
	OverlapScoreCredit        float64 // blocks of prefill credited per cached device block (default 1)
	OverlapScoreCreditDecay   float64 // shrinks the credit on workers with excess prefill (default 0)
	PrefillLoadScale          float64 // weight of the prefill term (default 1)
	DecodeActiveRequestWeight float64 // blocks charged per outstanding request (default 0)
	HostCacheHitWeight        float64 // no host tier here: no effect (default 0.75)
	DiskCacheHitWeight        float64 // no disk tier here: no effect (default 0.25)
	Temperature               float64 // 0: lowest cost; > 0: softmax over min-max-normalised costs

	// QueueThreshold, when > 0, holds requests at the router while every
	// prefill candidate's active prefill tokens exceed QueueThreshold × its
	// token budget per step. 0 = never hold.
	QueueThreshold float64

	// UseKVEvents takes device overlaps from the instances' caches (as KV
	// events report them); false predicts them from the router's own
	// decisions, each forgotten TTLNs after it was made.
	UseKVEvents bool
	TTLNs       int64

	// Conditional, when set in a disaggregated cluster, lets short or
	// well-cached prompts prefill on their decoder.
	Conditional *ConditionalDisagg
}

// ConditionalDisagg decides, once the decoder is chosen, whether a request
// prefills there instead of on a prefiller. With eff = prompt tokens minus
// the decoder's cached prefix:
//
//	local = (eff < EffISLThreshold and eff/ISL < EffISLRatioThreshold, or prefill pool busy)
//	        and not decoder busy
//
// where the prefill pool is busy when PrefillBusyTokens > 0 and every
// prefiller has at least that many active prefill tokens (a remote prefill
// would queue), and the decoder is busy when DecodeBusyTokens > 0 and its
// active prefill tokens plus eff exceed it (a local prefill would stall
// its decodes).
type ConditionalDisagg struct {
	EffISLThreshold      int     // tokens (default 2048)
	EffISLRatioThreshold float64 // in [0, 1] (default 0.7)
	PrefillBusyTokens    int     // 0 = no prefill-busy rule
	DecodeBusyTokens     int     // 0 = no decode-busy guard
}

// DefaultDynamoConfig returns Dynamo's defaults: credit 1, decay 0, scale
// 1, request weight 0, host 0.75, disk 0.25, temperature 0, KV events on,
// ttl 120 s, no queue threshold, no conditional disaggregation.
func DefaultDynamoConfig() DynamoConfig {
	return DynamoConfig{OverlapScoreCredit: 1, PrefillLoadScale: 1, HostCacheHitWeight: 0.75,
		DiskCacheHitWeight: 0.25, UseKVEvents: true, TTLNs: 120e9}
}

// DefaultConditionalDisagg returns the default thresholds: 2048 tokens and
// ratio 0.7, no busy rules.
func DefaultConditionalDisagg() ConditionalDisagg {
	return ConditionalDisagg{EffISLThreshold: 2048, EffISLRatioThreshold: 0.7}
}

// ApplyKVOverlapScoreWeight honours Dynamo's deprecated
// kv_overlap_score_weight: it replaces PrefillLoadScale, and when exactly 0
// also sets OverlapScoreCredit to 0. It wins over both.
func (c *DynamoConfig) ApplyKVOverlapScoreWeight(w float64) {
	c.PrefillLoadScale = w
	if w == 0 {
		c.OverlapScoreCredit = 0
	}
}

// Dynamo is Dynamo's KV router. Colocated, each worker is priced by the
// full cost. Disaggregated, the prefill leg is priced by the full cost over
// the prefillers and the decode leg by load alone (active blocks + R +
// request weight · outstanding), each chosen independently, unless
// conditional disaggregation is on: then the decoder is chosen first and
// the request may prefill on it.
type Dynamo struct {
	cfg   DynamoConfig
	ch    chooser
	index *TTLIndex // nil with KV events
	costs []float64
}

// NewDynamo returns the router; randomness (ties, temperature) comes from
// rng. Panics on a configuration the scenario loader would reject.
func NewDynamo(cfg DynamoConfig, rng *rand.Rand) *Dynamo {
	if cfg.Temperature < 0 || rng == nil {
		panic("router: Dynamo needs temperature ≥ 0 and a random stream")
	}
	d := &Dynamo{cfg: cfg, ch: chooser{rng: rng}}
	if !cfg.UseKVEvents {
		d.index = NewTTLIndex(cfg.TTLNs)
	}
	return d
}

// held returns the decision that keeps a request at the router.
func held() Decision { return Decision{Prefill: -1, Decode: -1} }

// Route implements Router.
func (d *Dynamo) Route(r *Request, c *Cluster) Decision {
	if len(c.Decode) == 0 {
		if d.holds(c.Prefill) {
			return held()
		}
		p := c.Prefill[d.pickPrefill(r, c)].Index
		d.record(r, c, p)
		return Decision{Prefill: p, Decode: -1}
	}
	var dec int
	if d.cfg.Conditional != nil {
		k := d.pickDecode(r, c)
		dec = c.Decode[k].Index
		if d.local(r, c, &c.Decode[k]) {
			d.record(r, c, dec)
			return Decision{Prefill: dec, Decode: -1}
		}
	}
	if d.holds(c.Prefill) {
		return held()
	}
	p := c.Prefill[d.pickPrefill(r, c)].Index
	if d.cfg.Conditional == nil {
		dec = c.Decode[d.pickDecode(r, c)].Index
	}
	d.record(r, c, p)
	d.record(r, c, dec)
	return Decision{Prefill: p, Decode: dec}
}

// holds reports whether every prefill candidate is past the queue
// threshold.
func (d *Dynamo) holds(vs []View) bool {
	if d.cfg.QueueThreshold <= 0 {
		return false
	}
	for i := range vs {
		if float64(vs[i].ActivePrefillTokens) <= d.cfg.QueueThreshold*float64(vs[i].MaxBatchedTokens) {
			return false
		}
	}
	return true
}

// pickPrefill returns the position in c.Prefill of the chosen worker.
func (d *Dynamo) pickPrefill(r *Request, c *Cluster) int {
	d.costs = d.prefillCosts(d.costs[:0], r, c, c.Prefill)
	return d.ch.minCost(d.costs, d.cfg.Temperature)
}

// pickDecode returns the position in c.Decode of the chosen decoder.
func (d *Dynamo) pickDecode(r *Request, c *Cluster) int {
	d.costs = d.decodeCosts(d.costs[:0], r, c.Decode, c.BlockSize)
	return d.ch.minCost(d.costs, d.cfg.Temperature)
}

// prefillCosts appends the full cost of each worker of vs.
func (d *Dynamo) prefillCosts(dst []float64, r *Request, c *Cluster, vs []View) []float64 {
	b := float64(c.BlockSize)
	reqBlocks := ceilDiv(r.PromptTokens, c.BlockSize)
	minActive := vs[0].ActivePrefillTokens
	for i := range vs {
		minActive = min(minActive, vs[i].ActivePrefillTokens)
	}
	for i := range vs {
		v := &vs[i]
		decay := 1.0
		if reqBlocks > 0 {
			excess := float64(v.ActivePrefillTokens-minActive) / b
			decay = 1 / (1 + d.cfg.OverlapScoreCreditDecay*excess/float64(reqBlocks))
		}
		credit := d.cfg.OverlapScoreCredit * decay * float64(d.overlap(r, c, v.Index))
		// + HostCacheHitWeight·0 + DiskCacheHitWeight·0: no host or disk tiers.
		prefill := max(0, float64(v.ActivePrefillTokens+r.PromptTokens)/b-credit)
		dst = append(dst, d.cfg.PrefillLoadScale*prefill+d.loadCost(v, reqBlocks))
	}
	return dst
}

// decodeCosts appends the load-only cost of each decoder of vs.
func (d *Dynamo) decodeCosts(dst []float64, r *Request, vs []View, blockSize int) []float64 {
	reqBlocks := ceilDiv(r.PromptTokens, blockSize)
	for i := range vs {
		dst = append(dst, d.loadCost(&vs[i], reqBlocks))
	}
	return dst
}

// loadCost is the decode part of the cost: potential decode blocks plus
// the active-request term.
func (d *Dynamo) loadCost(v *View, reqBlocks int) float64 {
	return float64(v.ActiveBlocks+reqBlocks) + d.cfg.DecodeActiveRequestWeight*float64(v.Outstanding)
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

// record teaches the router's own index (if any) that inst will hold the
// request's blocks.
func (d *Dynamo) record(r *Request, c *Cluster, inst int) {
	if d.index != nil {
		d.index.Record(inst, r.Hashes, c.NowNs)
	}
}

// local applies conditional disaggregation to the chosen decoder dec.
func (d *Dynamo) local(r *Request, c *Cluster, dec *View) bool {
	cd := d.cfg.Conditional
	eff := max(0, r.PromptTokens-d.overlap(r, c, dec.Index)*c.BlockSize)
	if cd.DecodeBusyTokens > 0 && dec.ActivePrefillTokens+eff > cd.DecodeBusyTokens {
		return false
	}
	ratio := 0.0
	if r.PromptTokens > 0 {
		ratio = float64(eff) / float64(r.PromptTokens)
	}
	if eff < cd.EffISLThreshold && ratio < cd.EffISLRatioThreshold {
		return true
	}
	return cd.PrefillBusyTokens > 0 && allAtLeast(c.Prefill, cd.PrefillBusyTokens)
}

// allAtLeast reports whether every view has at least tokens active prefill
// tokens.
func allAtLeast(vs []View, tokens int) bool {
	for i := range vs {
		if vs[i].ActivePrefillTokens < tokens {
			return false
		}
	}
	return true
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
