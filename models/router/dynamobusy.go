package router

import "handoff/models/strictyaml"

// Dynamo's busy thresholds (the frontend's --active-decode-blocks-threshold,
// --active-prefill-tokens-threshold and --active-prefill-tokens-threshold-frac;
// lib/llm/src/discovery/worker_monitor.rs, LoadThresholdConfig and
// WorkerLoadState::is_overloaded). A worker is busy when any set threshold
// is passed:
//
//	active_prefill_tokens > ActivePrefillTokensThreshold
//	active_prefill_tokens > ActivePrefillTokensThresholdFrac · max_num_batched_tokens
//	decode blocks         > ActiveDecodeBlocksThreshold · its KV blocks
//
// where the decode blocks are the router's own count of the blocks it
// routed there (active_decode_blocks) or the blocks in use the worker last
// reported (kv_used_blocks), whichever is past the line: Dynamo latches a
// worker busy when either signal passes it and frees it once both are
// under, which reading both at once amounts to. A busy worker is left out
// of the router's choice (RoutingEligibility::allows_worker_id,
// lib/kv-router/src/scheduling/filter.rs); when every worker is busy the
// frontend answers 503 (now 529), "all workers are busy" — handoff ends
// the request rejected (ReasonBusy). All unset (Dynamo's default), no
// worker is ever busy.

// busyConfigured reports whether any busy threshold is set.
func (c *DynamoConfig) busyConfigured() bool {
	return c.ActiveDecodeBlocksThreshold != nil || c.ActivePrefillTokensThreshold != nil ||
		c.ActivePrefillTokensThresholdFrac != nil
}

// checkBusy validates the busy thresholds as Dynamo's
// LoadThresholdConfig::validate does.
func (c *DynamoConfig) checkBusy() error {
	switch {
	case c.ActiveDecodeBlocksThreshold != nil && !(*c.ActiveDecodeBlocksThreshold >= 0 && *c.ActiveDecodeBlocksThreshold <= 1):
		return strictyaml.Fieldf("active_decode_blocks_threshold", "must be in [0, 1], as Dynamo requires, got %g",
			*c.ActiveDecodeBlocksThreshold)
	case c.ActivePrefillTokensThreshold != nil && *c.ActivePrefillTokensThreshold < 0:
		return strictyaml.Fieldf("active_prefill_tokens_threshold", "must not be negative, got %d", *c.ActivePrefillTokensThreshold)
	case c.ActivePrefillTokensThresholdFrac != nil && !weightOK(*c.ActivePrefillTokensThresholdFrac):
		return strictyaml.Fieldf("active_prefill_tokens_threshold_frac", "must be in [0, %g], got %g", MaxWeight,
			*c.ActivePrefillTokensThresholdFrac)
	}
	return nil
}

// busy reports whether worker v is past any busy threshold.
func (c *DynamoConfig) busy(v *View) bool {
	if t := c.ActivePrefillTokensThreshold; t != nil && v.ActivePrefillTokens > *t {
		return true
	}
	if f := c.ActivePrefillTokensThresholdFrac; f != nil && float64(v.ActivePrefillTokens) > *f*float64(v.MaxBatchedTokens) {
		return true
	}
	t := c.ActiveDecodeBlocksThreshold
	if t == nil || v.TotalBlocks == 0 {
		return false // no KV size reported: the decode check cannot fire
	}
	used := max(v.ActiveBlocks, v.TotalBlocks-v.FreeBlocks)
	return float64(used) > *t*float64(v.TotalBlocks)
}

// freeLegs returns c with each leg cut to its workers that are not busy,
// copied into d's scratch, and whether the request may be routed: false
// when every worker of a leg it needs at arrival is busy. Under
// disaggregation both legs are needed: the frontend's client is the
// decoders and the prefill router's the prefillers.
func (d *Dynamo) freeLegs(c *Cluster) (*Cluster, bool) {
	d.free = *c
	d.freePrefill = d.freeOf(d.freePrefill[:0], c.Prefill)
	d.free.Prefill = d.freePrefill
	if len(c.Decode) > 0 {
		d.freeDecode = d.freeOf(d.freeDecode[:0], c.Decode)
		d.free.Decode = d.freeDecode
	}
	return &d.free, len(d.free.Prefill) > 0 && (len(c.Decode) == 0 || len(d.free.Decode) > 0)
}

// freeOf appends the views of vs that are not busy.
func (d *Dynamo) freeOf(dst, vs []View) []View {
	for i := range vs {
		if !d.cfg.busy(&vs[i]) {
			dst = append(dst, vs[i])
		}
	}
	return dst
}

// freeDecoders is c with its decode leg cut to the decoders that are not
// busy, for the decode choice after a prefill; when every decoder is busy
// it is c whole (Dynamo's decode router would fail the request after its
// prefill; handoff lets it decode where the load is least).
func (d *Dynamo) freeDecoders(c *Cluster) *Cluster {
	d.freeDecode = d.freeOf(d.freeDecode[:0], c.Decode)
	if len(d.freeDecode) == 0 {
		return c
	}
	d.free = *c
	d.free.Decode = d.freeDecode
	return &d.free
}
