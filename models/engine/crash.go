package engine

// Crashes. An instance that fails loses everything on it: the step in
// flight, every sequence's KV and its prefix cache. The core takes each of
// its sequences off with Drop (the requests go elsewhere), then replaces
// the instance with Fresh, which starts cold.

// Drop takes s off a crashed instance wherever it is — queued, pulling,
// swapped out, running (also in the step in flight, which is lost with the
// instance) or holding finished prefill KV: as Abort, its blocks and
// host-tier room are freed and it is done here. After Drop the instance
// must not step again: its only use is Fresh. A cruising s computed
// nothing in the lost step: its tokens are those of the steps completed.
// Cost: that of Abort.
func (in *Instance) Drop(s *Seq) {
	inStep := in.inStep
	in.inStep, in.lostStep = false, inStep
	in.Abort(s)
	in.inStep, in.lostStep = inStep, false
}

// Fresh returns an empty instance of the same configuration, carrying the
// cumulative counters: the instance restarted (after a crash) or
// provisioned again (after a drain), its device pool and prefix cache
// cold. Its lower tiers are the configuration's: a shared store keeps what
// it holds, and so, here, do the host and disk tiers. It panics unless
// every sequence has left the instance (Drop, or they ended).
func (in *Instance) Fresh() *Instance {
	in.drainDeferred(in.stats.Steps)
	if !in.Idle() || in.pool.UsedBlocks() != 0 || in.mem.hostBlocks() != 0 {
		panic("engine: restarting an instance that still holds sequences")
	}
	n := New(in.cfg)
	n.stats, n.noCruise = in.stats, in.noCruise
	return n
}
