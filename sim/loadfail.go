package sim

// KV load failures. A prefiller that crashes after a prompt's prefill has
// ended loses that KV while its decoder still waits to pull it, or is
// pulling it. The decoder is not told: it finds out when its read fails —
// when it starts the pull, or, for a pull the crash cut, when the network
// would have finished it (the network model cannot cancel a transfer, and
// NIXL reports a failed read only once it polls its state). vLLM's NIXL
// worker then marks the request's blocks invalid (_handle_failed_transfer)
// and the scheduler applies kv_load_failure_policy
// (KVTransferConfig.kv_load_failure_policy; Scheduler._handle_invalid_blocks):
// "recompute" (the default from its introduction, vLLM PR #26813, until PR
// #34896 made it "fail" in 0.17) keeps the request and the blocks it
// holds on the decoder, which prefills the prompt itself; "fail" finishes
// it with an error, which the serving layer in front answers by sending it
// again — here a fail-over (failover.go). A failed read is detected; a
// read of KV freed at a hold timeout is not (hold.go).
//
// A prefiller crash before the prefill ends, a layer-wise streamed prefill
// included, fails the request over as any crash does; so does a crash of
// a prefiller handing its KV off through the store (the decoder reads the
// store).

// pullsFrom reports whether flight f's decoder has yet to finish reading
// its KV from prefill instance i: the prefill ended, and the pull has not.
func pullsFrom(f *flight, i int) bool {
	if f.route.Prefill != i || f.route.Decode < 0 || f.viaStore {
		return false
	}
	return f.phase.holdsKV() || f.phase == phaseLost || f.phase == phaseTransferring
}

// loseSource records that flight ref's prefiller, instance i, crashed
// before its decoder read its KV: the KV is gone with it, and the decoder
// will find out when it reads.
func (c *cluster) loseSource(ref int32, i int) {
	f := c.flights.at(ref)
	if s := f.pseq; s != nil {
		c.touch(i).Drop(s)
		c.retire(i, s)
		f.pseq = nil
	}
	f.srcGone = true
	if f.phase.holdsKV() {
		c.enter(ref, phaseLost)
	}
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(i), "KV lost with its prefiller", c.nowNs)
	}
}

// loadFailed applies the decoder's kv_load_failure_policy to flight ref,
// whose pull found its prefiller gone.
func (c *cluster) loadFailed(ref int32) {
	f := c.flights.at(ref)
	d := f.route.Decode
	if c.traced(f.req.ID) {
		c.cfg.Tracer.Instant(f.req.ID, instanceTrack(d), "KV load failed", c.nowNs)
	}
	if c.replicas[d].cfg.RecomputeLoadFailures {
		c.enter(ref, phaseStarting)
		c.touch(d).KVLost(f.dseq, c.nowNs)
		c.kickSoon(d)
		return
	}
	c.beginFailover(ref, f.route.Prefill)
	f.waitNet = false // its pull is over
	if !c.restart(ref) {
		c.pendFailover(ref)
	}
}

// strandOnDecoderLoss strands the KV flight f's prefiller holds for it
// when its decoder, instance i, crashes before reading it all: the dead
// decoder neither completes the read nor heartbeats (strand.go).
func (c *cluster) strandOnDecoderLoss(f *flight, i int) {
	if s := f.pseq; s == nil || s == f.dseq || f.route.Decode != i || !s.Finished() {
		return
	}
	c.strandPrefill(f, c.strandedExpiryNs(f, f.handoffNs, true))
}
