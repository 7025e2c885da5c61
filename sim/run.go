package sim

import (
	"fmt"
	"math"

	"handoff/models/engine"
	"handoff/models/network"
	"handoff/models/perf"
	"handoff/results"
)

// Result is the outcome of a run: one record per request in arrival order
// (unless they went to Config.Records), the inter-token latency
// distribution, and per-instance and per-link counters.
type Result struct {
	// Records is every request's record by ID when Config.Records is
	// nil; with a sink it is nil, and Sink is the sink that took them.
	Records   []results.Record
	Sink      RecordSink
	Requests  int64 // requests in the run
	ITL       *results.Histogram
	SimTimeNs int64 // time of the last event
	Events    int64 // events processed
	Instances []InstanceResult
	Links     []LinkResult
	Timelines []Timeline   // per instance, when Config.TimelineIntervalNs > 0
	Tiers     []TierResult // per kind of lower KV tier the instances have (tiers.go)

	// A changing fleet (fleet.go, faults.go): each pool's instance counts
	// at every change, and the time from each instance's request to its
	// being ready, in the order they became ready; nil for a fixed fleet.
	Fleet      []PoolFleet
	ScaleUpsNs []int64

	// Runs is what runs of steady steps did (steprun.go).
	Runs RunStats

	// LockupChains are the waits-for chains between instances that
	// lock-up spells formed (lockchain.go), in the order first seen (those
	// first seen at one instant in the order of their text).
	LockupChains []results.LockupChain

	chainSeenNs []int64       // when each of LockupChains was first seen
	tail        *timelineTail // a shard's (split.go): how its timelines would go on
}

// RunStats counts what runs of steady steps did in a run (steprun.go).
type RunStats struct {
	Steps   int64 // steps completed inside a run, without an event of their own
	Priced  int64 // steps priced ahead when runs began
	Dropped int64 // of those, the steps a run cut short never took
	Ties    int64 // runs ended by an event at the very end of one of their steps
	Moot    int64 // step events popped moot: a cut run's, or a crashed instance's
}

// InstanceResult is one instance's counters at the end of a run.
type InstanceResult struct {
	Name, Pool, Owner string
	Role              Role
	GPUs              int
	Blocks            int   // KV blocks in its pool
	BusyNs            int64 // time spent inside steps
	PrefillBusyNs     int64 // busy time attributed to prefill work (re-prefill included)
	Cascades          int   // preemption chains of depth ≥ 2
	LongestCascade    int   // deepest chain
	CascadeNs         int64 // time inside cascades
	Lockups           int   // lock-up spells of every kind (lockup.go)
	LockupNs          int64
	// LockSpells and LockNs are its lock-up spells and their time by
	// kind, indexed as results.LockNames.
	LockSpells [results.NumLockKinds]int
	LockNs     [results.NumLockKinds]int64
	Stats      engine.Stats

	// BilledNs is how long it was paid for: requested, ready or draining
	// (the whole run in a fixed fleet). Crashes counts its crashes while
	// up, FailedOver the requests that failed over from it.
	BilledNs   int64
	Crashes    int64
	FailedOver int64
}

// LinkResult is one link's counters at the end of a run.
type LinkResult struct {
	Name  string
	Stats network.LinkStats
}

// cluster is the state of one run.
type cluster struct {
	cfg         *Config
	q           eventQueue
	nowNs       int64
	replicas    []replica // one per instance
	kicking     bool      // inside kick: further kicks are deferred
	completing  int       // the instance whose finished step onStep is handling, or -1: it is not kicked until done
	placing     bool      // inside place: held requests are not retried
	tl          timelines
	parts       batchParts
	net         *network.Network
	linkNames   []string // per network link: the topology's, then the tiers'
	tiers       tierState
	netVersion  int32
	netAtNs     int64
	flights     flightTable
	freeFlights []int32
	itl         results.Histogram
	cur         event // the event being handled
	runs        bool  // instances may run steady steps without events (steprun.go)

	runBatch    perf.Batch // scratch: a run's step priced
	runStats    RunStats   // Result.Runs
	routing     routing
	holders     holders // which instances a prefix may count on (holders.go)
	prefillIdx  []int
	decodeIdx   []int
	next        Request
	events      int64
	arrivals    int // arrival events queued (pushArrival)
	ended       int64
	doneScratch []int32
	pathScratch []int32 // a topology path, for the moment it is used (Topology.AppendPath)
	client      clientState
	groups      []dpGroup // data-parallel groups (dpgroup.go)
	loop        closedLoop
	sessions    sessionState
	fleet       *fleet // instances that come and go, faults; nil: none (fleet.go)
	drainingN   int    // instances draining
	err         error
	recs        recordWindow // the requests' records (records.go)
	chains      lockChains   // waits-for chains of lock-ups (lockchain.go)
}

// Run simulates the configured cluster until every request has ended. The
// run is a pure function of cfg: the same configuration and seed give the
// same result, bit for bit.
func Run(cfg *Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := newCluster(cfg)
	c.start()
	total := cfg.ProgressTotal()
	for n := int64(1); c.q.len() > 0 && c.err == nil; n++ {
		c.dispatch(c.q.pop())
		c.recs.flush()
		if n&(ProgressEvents-1) == 0 && cfg.Progress != nil {
			cfg.Progress(c.nowNs, c.ended, total)
		}
	}
	if cfg.Progress != nil {
		cfg.Progress(c.nowNs, c.ended, total)
	}
	if c.err != nil {
		return nil, c.err
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c.result(), nil
}

// finish ends what a drained queue leaves: the requests a polling router
// still holds, the KV stranded on prefillers; then checks the run's
// invariants (checkEnd).
func (c *cluster) finish() error {
	c.dropHeld()
	c.recs.flush()
	c.freeStranded()
	return c.checkEnd()
}

// start schedules the first arrivals: the source's first request, or a
// closed loop's first sends.
func (c *cluster) start() {
	if c.fleet != nil {
		c.startFleet()
	}
	if c.closed() {
		c.startLoop()
		return
	}
	c.pullArrival()
}

// checkEnd asserts the conservation invariants at the end of a run: every
// request ended exactly once, and every instance is idle with all its KV
// blocks back in its pool. A failure is a simulator bug.
func (c *cluster) checkEnd() error {
	if c.ended != c.recs.next {
		return fmt.Errorf("sim: %d of %d requests never ended (simulator bug)",
			c.recs.next-c.ended, c.recs.next)
	}
	if n := len(c.routing.held) - c.routing.heldFrom; n != 0 {
		return fmt.Errorf("sim: %d requests still held by the router (simulator bug)", n)
	}
	checked := map[*engine.Tier]bool{}
	for i := range c.replicas {
		rp := &c.replicas[i]
		name, in := rp.cfg.Name, rp.eng
		if rp.prefillTokens != 0 || rp.blocks != 0 || rp.outstanding != 0 || rp.routed != 0 || rp.tokenLoad != 0 || rp.through != 0 {
			return fmt.Errorf("sim: router bookkeeping of %s did not return to zero (simulator bug)", name)
		}
		pool := in.Pool()
		if !in.Idle() || pool.UsedBlocks() != 0 || in.HostBlocksUsed() != 0 {
			return fmt.Errorf("sim: instance %s ended with work, %d blocks or %d host blocks in use (simulator bug)",
				name, pool.UsedBlocks(), in.HostBlocksUsed())
		}
		if err := pool.Check(); err != nil {
			return fmt.Errorf("sim: instance %s: %w (simulator bug)", name, err)
		}
		for _, t := range rp.cfg.Engine.Tiers {
			if checked[t] {
				continue // a shared store, audited once
			}
			checked[t] = true
			if err := t.Blocks.Check(); err != nil || t.Blocks.Reserved() != 0 {
				return fmt.Errorf("sim: instance %s: %s tier: %v, %d blocks still reserved (simulator bug)",
					name, t.Kind, err, t.Blocks.Reserved())
			}
		}
	}
	return nil
}

func newCluster(cfg *Config) *cluster {
	n := len(cfg.Instances)
	c := &cluster{cfg: cfg, replicas: make([]replica, n), netAtNs: -1, completing: -1, tl: newTimelines(cfg)}
	for i := range cfg.Instances {
		ic := &cfg.Instances[i]
		c.replicas[i] = newReplica(ic, cfg.eager)
		if cfg.RouterCountsSharedBlocks {
			c.replicas[i].shared = &sharedBlocks{refs: map[uint64]int32{}}
		}
		if ic.Role == RoleDecode {
			c.decodeIdx = append(c.decodeIdx, i)
		} else {
			c.prefillIdx = append(c.prefillIdx, i)
		}
	}
	c.initFleet()
	c.initRouting()
	c.initHolders()
	c.initGroups()
	c.initSessions()
	c.runs = c.runsAllowed()
	c.recs.init(cfg.Records, cfg.ReservedRecords())
	var caps []float64
	if cfg.Topology != nil {
		caps, c.linkNames = cfg.Topology.Caps, cfg.Topology.Names
	}
	if caps, c.linkNames = c.initTiers(caps, c.linkNames); len(caps) > 0 {
		c.net = network.New(caps)
	}
	return c
}

// dispatch handles one event.
func (c *cluster) dispatch(e event) {
	if e.class() == classArrival {
		c.arrivals--
	}
	if c.superseded(&e) {
		if e.class() == classStep {
			c.runStats.Moot++
		}
		return
	}
	if e.at > c.tl.nextNs {
		c.sampleBefore(e.at)
	}
	c.nowNs, c.cur = e.at, e
	c.events++
	switch e.class() {
	case classNetwork:
		c.onNetwork()
	case classStep:
		c.onStep(int(e.arg))
	case classTimeout:
		c.onHoldTimeouts(int(e.arg))
	case classStaging:
		c.onStaged(e.arg)
	case classRecompile:
		c.touch(int(e.arg)).Recompiled()
		c.kickSoon(int(e.arg))
	case classWatchdog:
		c.onWatchdog(int(e.arg))
	case classClient:
		c.onClientTimeouts(int(e.arg))
	case classArrival:
		c.onArrival(e.arg)
	case classFrontend:
		c.onFrontendDone(e.arg)
	case classRelay:
		c.onRelayed(e.arg)
	case classNetStart:
		c.onNetStart(e.arg)
	case classKick:
		c.replicas[e.arg].kickPending = false
		c.kick(int(e.arg))
	case classFleet:
		c.onFleet(e.arg)
	case classPoll:
		c.onPoll()
	}
	if c.drainingN > 0 {
		c.checkDrains()
	}
}

// superseded reports whether event e no longer applies — a network
// prediction replaced by a later one, a hold timeout for KV already pulled,
// a watchdog for an instance that moved on — so that it neither runs nor
// advances the clock.
func (c *cluster) superseded(e *event) bool {
	switch e.class() {
	case classStep: // lost with a crash of its instance, or moved (run.go)
		return uint32(e.key) != c.replicas[e.arg].stepGen
	case classRecompile: // lost with a crash of its instance
		return e.key&(1<<56-1) <= c.replicas[e.arg].staleSeq
	case classNetwork:
		return e.arg != c.netVersion
	case classFleet:
		return c.fleetSuperseded(e)
	case classTimeout:
		return c.holdSuperseded(int(e.arg), e.at)
	case classWatchdog:
		return c.watchSuperseded(int(e.arg), e.at)
	case classClient:
		return c.clientSuperseded(int(e.arg), e.at)
	case classArrival:
		return c.closed() && e.arg == 0 && c.sendSuperseded(e.at)
	case classRelay:
		return c.relaySuperseded(e.arg, e.at)
	}
	return false
}

func (c *cluster) result() *Result {
	itl := c.itl // a copy: pointing into c would keep the whole cluster alive
	c.sampleToEnd()
	r := &Result{Records: c.recs.all, Sink: c.recs.sink, Requests: c.recs.next, ITL: &itl, SimTimeNs: c.nowNs, Events: c.events, Timelines: c.tl.list}
	for i := range c.replicas {
		rp := &c.replicas[i]
		ic, m := rp.cfg, &rp.metrics
		r.Instances = append(r.Instances, InstanceResult{Name: ic.Name, Pool: ic.Pool, Owner: rp.owner(),
			Role: ic.Role, GPUs: ic.GPUs, Blocks: ic.Engine.NumBlocks, BusyNs: rp.busyNs,
			PrefillBusyNs: int64(m.prefillNs + 0.5), Cascades: m.cascades, LongestCascade: m.longest,
			CascadeNs: m.cascadeNs, LockSpells: m.lock.spells, LockNs: m.lock.spellNs, Stats: rp.eng.Stats(),
			BilledNs: c.nowNs})
		in := &r.Instances[len(r.Instances)-1]
		for k := range in.LockSpells {
			in.Lockups, in.LockupNs = in.Lockups+in.LockSpells[k], in.LockupNs+in.LockNs[k]
		}
	}
	r.Runs = c.runStats
	r.LockupChains, r.chainSeenNs = c.chainResults()
	if c.cfg.shard {
		r.tail = c.timelineTail()
	}
	c.fleetResults(r)
	if c.net != nil {
		for l := range c.net.Links() {
			r.Links = append(r.Links, LinkResult{Name: c.linkNames[l], Stats: c.net.Stats(l)})
		}
	}
	r.Tiers = c.tierResults()
	return r
}

// kickSoon plans instance i's next step now, or — when other events are
// due at this same instant, or while another instance's plan is being
// handled (planning never nests) — after them, so that the step sees them
// all.
func (c *cluster) kickSoon(i int) {
	if c.replicas[i].kickPending {
		return
	}
	if c.kicking || i == c.completing || c.q.len() > 0 && c.q.h[0].at == c.nowNs {
		c.replicas[i].kickPending = true
		c.q.pushInstance(c.nowNs, classKick, int32(i), 0)
		return
	}
	c.kick(i)
}

// kick starts the next step on an idle instance, if it has work, and
// handles what planning it did: preemptions, swap-ins, rejections, pulls.
func (c *cluster) kick(i int) {
	rp := &c.replicas[i]
	if rp.group >= 0 {
		c.kickGroup(rp.group)
		return
	}
	if rp.pipe != nil {
		c.kickPipe(i)
		return
	}
	if c.engine(i).Busy() {
		return
	}
	c.kicking = true
	b := c.plan(i)
	c.kicking = false
	if b == nil {
		return
	}
	rp.stepStartNs = c.nowNs
	d := max(rp.cfg.Timer.StepNs(b), 1)
	if rp.slow > 0 { // a straggler
		d = max(int64(float64(d)*rp.slow+0.5), 1)
	}
	c.busyWith(i, b, d)
	c.pushStep(i, c.startRun(i, c.nowNs+d))
}

// pushStep queues the end of instance i's step in flight at atNs, the
// only one of its step events that applies.
func (c *cluster) pushStep(i int, atNs int64) {
	rp := &c.replicas[i]
	rp.stepGen++
	c.q.pushInstance(atNs, classStep, int32(i), rp.stepGen)
}

// plan schedules instance i's next step and handles what planning did:
// preemptions, swap-ins, rejections, streamed handoffs, pulls. It returns
// the step's batch, or nil when the instance has nothing to compute.
func (c *cluster) plan(i int) *perf.Batch {
	rp := &c.replicas[i]
	inst := rp.eng
	b, res := inst.Schedule(c.nowNs)
	c.notePreemptions(i, len(res.Preempted))
	c.preempted(i, res.Preempted)
	if c.cfg.Tracer != nil {
		c.traceRecovered(i, res.Recovered) // swapped back in
	}
	c.noteVictims(i)
	for _, s := range res.Rejected {
		c.rejected(i, s)
	}
	if rp.cfg.StreamKV {
		for _, s := range res.FinalChunks {
			f := c.flights.at(s.Ref)
			if f.phase == phaseFailover || !c.chooseDecoder(s.Ref) {
				continue // handled when the prefill ends
			}
			if d := f.route.Decode; c.engine(d).MayRefuse() || c.doesNotFitDecoder(&f.req, d) != "" {
				continue // a decoder that may refuse it, or cannot hold it, gets it after the prefill
			}
			c.handoff(s.Ref)
		}
	}
	for _, s := range res.Pulls {
		c.startPull(i, s)
	}
	for _, s := range res.Onboards {
		c.startOnboard(i, s, false)
	}
	if b == nil && inst.RecompileDue() {
		c.q.push(c.nowNs+max(rp.cfg.Engine.RecompileNs, 1), classRecompile, int32(i))
	}
	c.notePlan(i, b != nil) // idle, busy, or stuck: perhaps locked up (lockup.go)
	return b
}

// batchParts are a step's prefill and decode work priced apart.
type batchParts struct {
	prefill, decode perf.Batch
}

func (p *batchParts) split(b *perf.Batch) {
	p.prefill = *b
	p.prefill.DecodeSeqs, p.prefill.DecodeContext = 0, 0
	p.decode = perf.Batch{DecodeSeqs: b.DecodeSeqs, DecodeContext: b.DecodeContext}
}

// scheduleNetwork (re)predicts the network's next completion.
func (c *cluster) scheduleNetwork() {
	next := c.net.NextNs()
	if next == math.MaxInt64 || next == c.netAtNs {
		return
	}
	c.netVersion++
	c.netAtNs = next
	c.q.push(next, classNetwork, c.netVersion)
}
