package sim

// The KV transfer of a disaggregated request: the pull from the prefiller
// (or from the store it handed the KV to, with the decoder's own tier
// reads beside it), its completion on the network, and the staging into a
// wafer decoder's layout.

import "handoff/models/engine"

// startPull begins the KV transfer of a decode sequence that got its
// blocks. KV its prefiller no longer has is read all the same: freed at a
// timeout, the read goes unnoticed (hold.go); lost in a crash, the read
// fails and the decoder's kv_load_failure_policy applies (loadfail.go).
func (c *cluster) startPull(d int, s *engine.Seq) {
	ref := s.Ref
	f := c.flights.at(ref)
	switch f.phase {
	case phaseLost:
		switch {
		case f.srcGone:
			c.loadFailed(ref)
			return
		case !f.viaStore:
			c.expiredRead(f)
		}
		c.enter(ref, phaseTransferring) // from the prefiller's freed blocks, or from the store
	case phasePrefilling: // streaming: the prompt's last step is running
		c.enter(ref, phaseStreaming)
		s.Wait = engine.Waits{} // its wait for room ran beside the prefill, off the request's path
	default:
		c.enter(ref, phaseTransferring)
	}
	tokens := s.RemoteTokens
	if s.Onboard != [engine.NumTiers]int32{} {
		if f.phase == phaseStreaming { // layer-wise streaming sends the whole prompt from the prefiller
			tokens = s.PromptTokens - s.CachedTokens
		} else {
			f.readsPending = true
			c.startOnboard(d, s, true)
		}
	}
	if f.viaStore { // it reads once the prefiller's write lands
		path, latencyNs := c.storePath(f.route.Prefill)
		c.startAfter(f.storeNs, ref, path, latencyNs, c.kvBytes(d, tokens))
	} else { // started now: the network copies the scratch path at once
		var latencyNs int64
		c.pathScratch, latencyNs = c.cfg.Topology.AppendPath(c.pathScratch[:0], f.route.Prefill, d)
		c.net.Start(ref, c.pathScratch, latencyNs, c.kvBytes(d, tokens), c.nowNs)
	}
	c.scheduleNetwork()
}

// onNetwork completes the transfers due now: the prefill instance frees the
// request's blocks and the decode instance resumes it.
func (c *cluster) onNetwork() {
	c.netAtNs = -1
	c.doneScratch = c.net.Advance(c.nowNs, c.doneScratch[:0])
	c.tiers.kick = c.tiers.kick[:0]
	for _, ref := range c.doneScratch {
		if ref&onboardRef != 0 {
			c.onboardDone(ref &^ onboardRef)
			continue
		}
		if f := c.flights.at(ref); f.phase == phaseFailover {
			f.waitNet = false // the crash lost it: it goes again (failover.go)
			continue
		} else if f.readsPending {
			f.pullDone = true // its reads from the decoder's tiers finish it
			continue
		}
		if c.flights.at(ref).phase == phaseStreaming {
			c.enter(ref, phaseStreamed) // ahead of its prefill step: wait for it
			continue
		}
		c.transferred(ref)
	}
	// Kick only after applying every transfer due now, so that a decoder
	// batches all the sequences that became ready at this instant.
	for _, ref := range c.doneScratch {
		if ref&onboardRef != 0 || c.flights.at(ref).pullDone || c.flights.at(ref).phase == phaseFailover {
			continue
		}
		f := c.flights.at(ref)
		if f.route.Decode < 0 {
			continue // its pull failed, and it went again (loadFailed)
		}
		c.kickSoon(f.route.Decode)
		c.kickSoon(f.route.Prefill)
	}
	for _, i := range c.tiers.kick {
		c.kickSoon(int(i))
	}
	if c.fleet != nil && len(c.fleet.pending) > 0 {
		c.retryFailovers()
	}
	if len(c.client.pending) > 0 {
		c.retryAbandons()
	}
	c.scheduleNetwork()
}

// transferred applies one finished KV transfer: the prefiller frees the KV.
// If the decoder stages KV into its own layout (a wafer), the KV is ready
// only after bytes / staging rate more.
func (c *cluster) transferred(ref int32) {
	f := c.flights.at(ref)
	if f.srcGone { // its prefiller crashed during the pull: the read failed
		c.loadFailed(ref)
		return
	}
	rec := c.record(f.req.ID)
	if f.pseq != nil { // else it freed the KV at its timeout, or after handing it to the store (onHoldTimeout)
		rec.Preemptions += int32(f.pseq.Preemptions)
		if f.attempt == 0 {
			rec.CachedTokens = int32(f.pseq.CachedTokens)
		}
	}
	if rate := c.replicas[f.route.Decode].cfg.StagingBps; rate > 0 {
		c.enter(ref, phaseStaging)
		c.releasePrefill(f)
		bytes := c.kvBytes(f.route.Decode, f.dseq.RemoteTokens)
		c.q.push(c.nowNs+int64(bytes/rate*1e9+0.5), classStaging, ref)
		return
	}
	c.enter(ref, phaseStarting)
	c.releasePrefill(f)
	c.kvReady(ref)
}

// onStaged hands staged KV to the decoder.
func (c *cluster) onStaged(ref int32) {
	if f := c.flights.at(ref); f.phase == phaseFailover {
		f.waitStage = false
		c.retryFailovers()
		return
	}
	c.enter(ref, phaseStarting)
	c.kvReady(ref)
	c.kickSoon(c.flights.at(ref).route.Decode)
	if len(c.client.pending) > 0 {
		c.retryAbandons()
	}
}

// kvReady hands the transferred (and staged) KV to the decoder.
func (c *cluster) kvReady(ref int32) {
	f := c.flights.at(ref)
	c.touch(f.route.Decode).KVArrived(f.dseq, c.nowNs)
}

// kvBytes is the KV a transfer moves into decoder d for tokens prompt
// tokens.
func (c *cluster) kvBytes(d, tokens int) float64 {
	if k := c.replicas[d].cfg.KVIn; k != (KVSize{}) {
		return k.Bytes(tokens)
	}
	return float64(tokens) * c.cfg.KVBytesPerToken
}
