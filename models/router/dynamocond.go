package router

// Dynamo's routing of a request, with conditional disaggregation
// (ConditionalDisagg) and its router queue's order.
//
// With conditional disaggregation, in a disaggregated cluster, a request
// may prefill on its decoder instead of on a prefiller. Dynamo first peeks
// the decoder its decode router would choose (prefill_router's conditional
// bypass). That router keeps the overlap credit when conditional
// disaggregation is on, and prices a decoder by its decode branch of
// worker_logit (lib/kv-router/src/scheduling/selector/default.rs):
//
//	cost_w = max(0, active_blocks_w + R − credit_w) + DecodeActiveRequestWeight · outstanding_w
//	credit_w = OverlapScoreCredit · device_overlap_w + the lower tiers' credit
//
// (no decay: a decode router tracks no prefill tokens). ConditionalPeekCost
// full prices the decoders by the full cost instead, prefill term included,
// as handoff did before; so does a credit of 0, where worker_logit falls
// through to the full formula. With eff = prompt tokens minus that
// decoder's cached prefix, the policies of lib/kv-router/src/
// conditional_disagg.rs (make_conditional_disagg_policy) say to prefill
// locally when
//
//	isl_bounding:  eff < EffISLThreshold and eff / max(ISL, 1) < EffISLRatioThreshold
//	prefill_load:  the prefiller Dynamo would pick is busy
//	isl_or_load:   either
//	token_cap:     eff ≤ BypassBelowTokens (conditional_prefill.rs, earlier releases)
//
// where a prefiller is busy when its active prefill tokens exceed
// PrefillBusyThreshold (unset: router_queue_threshold; both unset: never)
// × its token budget. The decoder then vetoes a local prefill when
// DecodeBusyThreshold is set and its decode blocks with the request's
// (active_blocks + R, the projected decode load) exceed that share of its
// KV blocks (decode_gate_allows_bypass in the prefill router).

// peek is the prefiller a conditional decision peeked, kept for the
// remote prefill that follows so that it is not drawn twice.
type peek struct {
	ok         bool
	k, overlap int
}

// Route implements Router: with busy thresholds, over the workers that
// are not busy, and rejected when a leg has none.
func (d *Dynamo) Route(r *Request, c *Cluster) Decision {
	whole := c
	if d.cfg.busyConfigured() {
		free, ok := d.freeLegs(c)
		if !ok {
			return rejected(ReasonBusy)
		}
		c = free
		d.scan = true
		defer func() { d.scan = false }()
	}
	return d.route(r, c, whole)
}

// route is Route over c, whose legs are whole's or their free workers.
func (d *Dynamo) route(r *Request, c, whole *Cluster) Decision {
	d.peeked = peek{}
	if len(c.Decode) > 0 && d.cfg.ConditionalDisagg {
		v, overlap := d.peekDecoder(r, c, whole)
		if d.local(r, c, v, overlap) {
			d.bind(r, c, true, v.Index)
			d.record(r, c, v.Index)
			return Decision{Prefill: v.Index, Decode: -1, PrefillCached: cachedTokens(r, c, overlap)}
		}
	}
	if d.holds(c) {
		return held()
	}
	p, overlap := d.prefiller(r, c, whole)
	d.bind(r, c, false, p)
	d.record(r, c, p)
	dec := -1
	if len(c.Decode) > 0 {
		dec = DecodeLater
	}
	return Decision{Prefill: p, Decode: dec, PrefillCached: cachedTokens(r, c, overlap)}
}

// prefiller returns the worker that prefills r — its session's, the one a
// conditional decision peeked, or the cheapest — and its device overlap.
func (d *Dynamo) prefiller(r *Request, c, whole *Cluster) (inst, overlap int) {
	if v := d.pinned(r, whole, false); v != nil {
		return v.Index, d.overlap(r, c, v.Index)
	}
	k, overlap := d.peeked.k, d.peeked.overlap
	if !d.peeked.ok {
		k, overlap = d.pick(r, c, false)
	}
	return c.Prefill[k].Index, overlap
}

// peekDecoder returns the decoder a conditional decision is about — its
// session's, or the one Dynamo's decode router would choose — and its
// device overlap.
func (d *Dynamo) peekDecoder(r *Request, c, whole *Cluster) (*View, int) {
	if v := d.pinned(r, whole, true); v != nil {
		return v, d.overlap(r, c, v.Index)
	}
	k, overlap := d.cheapestDecoder(r, c)
	return &c.Decode[k], overlap
}

// cheapestDecoder returns the position in c.Decode of the decoder
// Dynamo's decode router would choose with the overlap credit kept, and
// its device overlap.
func (d *Dynamo) cheapestDecoder(r *Request, c *Cluster) (k, overlap int) {
	if d.cfg.ConditionalPeekCost == PeekFull || d.cfg.OverlapScoreCredit == 0 {
		return d.pick(r, c, true)
	}
	if d.indexable(r, c) {
		return d.peekDecoderIndexed(r, c)
	}
	vs := c.Decode
	d.costs, d.overlaps = d.costs[:0], d.overlaps[:0]
	for i := range vs {
		o := d.overlap(r, c, vs[i].Index)
		d.overlaps = append(d.overlaps, o)
		d.costs = append(d.costs, d.decodeLogit(r, c, &vs[i], o))
	}
	k = d.ch.minCost(d.costs, d.cfg.Temperature)
	return k, d.overlaps[k]
}

// decodeLogit is decoder v's cost in Dynamo's decode router with the
// overlap credit kept (worker_logit's decode branch).
func (d *Dynamo) decodeLogit(r *Request, c *Cluster, v *View, overlap int) float64 {
	credit := d.cfg.OverlapScoreCredit*float64(overlap) + d.tierCredit(r, c, v.Index, overlap)
	blocks := float64(v.ActiveBlocks + r.PromptTokens/c.BlockSize)
	return max(0, blocks-credit) + d.cfg.DecodeActiveRequestWeight*float64(v.Outstanding)
}

// local applies conditional disaggregation to the chosen decoder dec,
// which holds overlap of the prompt's blocks.
func (d *Dynamo) local(r *Request, c *Cluster, dec *View, overlap int) bool {
	eff := max(0, r.PromptTokens-overlap*c.BlockSize)
	var says bool
	switch d.cfg.ConditionalPolicy {
	case ConditionalTokenCap:
		says = eff <= d.cfg.BypassBelowTokens
	case ConditionalISLBounding:
		says = d.islBounded(r, eff)
	case ConditionalPrefillLoad:
		says = d.prefillBusy(r, c)
	case ConditionalISLOrLoad:
		says = d.islBounded(r, eff) || d.prefillBusy(r, c)
	}
	return says && !d.decodeBusy(r, c, dec)
}

// islBounded is isl_bounding's rule: a small and mostly cached prefill.
func (d *Dynamo) islBounded(r *Request, eff int) bool {
	ratio := float64(eff) / float64(max(r.PromptTokens, 1))
	return eff < d.cfg.EffISLThreshold && ratio < d.cfg.EffISLRatioThreshold
}

// prefillBusy peeks the prefiller Dynamo would pick and reports whether
// its active prefill tokens are past the busy line.
func (d *Dynamo) prefillBusy(r *Request, c *Cluster) bool {
	threshold := d.cfg.QueueThreshold
	if t := d.cfg.PrefillBusyThreshold; t != nil {
		threshold = *t
	} else if threshold <= 0 {
		return false // no signal: the policy treats the prefiller as calm
	}
	k, overlap := d.pick(r, c, false)
	d.peeked = peek{ok: true, k: k, overlap: overlap}
	v := &c.Prefill[k]
	return float64(v.ActivePrefillTokens) > threshold*float64(v.MaxBatchedTokens)
}

// decodeBusy reports whether decoder v's projected decode blocks are past
// DecodeBusyThreshold's share of its KV blocks; unknown (no threshold, no
// KV size) is not busy.
func (d *Dynamo) decodeBusy(r *Request, c *Cluster, v *View) bool {
	t := d.cfg.DecodeBusyThreshold
	if t == nil || v.TotalBlocks == 0 {
		return false
	}
	projected := v.ActiveBlocks + r.PromptTokens/c.BlockSize
	return float64(projected) > *t*float64(v.TotalBlocks)
}

// queueTier is the span of one priority tier's queue keys.
const queueTier = 1 << 40

// QueueKey implements Queuer: a request's class's priority as Dynamo's
// strict_priority tier (nvext.agent_hints.strict_priority), the first key
// of its router queue — a higher tier is dispatched first, here a lower
// class priority — then its queue policy's order within the tier
// (lib/kv-router's policy_queue.rs, cmp_queue_order and
// queue_policy_score): fcfs by arrival (the order held), lcfs the latest
// arrival first, wspt the shortest prompt first. Dynamo's wspt weighs the
// prompt's uncached tokens, which change while a request waits; handoff
// keys it by the whole prompt, as Dynamo's earlier WsptPolicy did. The
// soft priority (agent_hints.priority, a head start) is not modelled.
func (d *Dynamo) QueueKey(r *Request) int64 {
	var within int64
	switch d.cfg.QueuePolicy {
	case QueueLCFS:
		within = queueTier - 1 - min(r.ID, queueTier-1)
	case QueueWSPT:
		within = min(int64(max(r.PromptTokens, 1)), queueTier-1)
	}
	return int64(r.Priority)*queueTier + within
}

// Queues implements Queuer: the router queues only with a queue threshold.
func (d *Dynamo) Queues() bool { return d.cfg.QueueThreshold > 0 }
