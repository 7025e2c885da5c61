package sim

import (
	"fmt"

	"handoff/models/autoscale"
	"handoff/models/router"
)

// Fleets that change: instances requested, made ready, drained and
// stopped, by an autoscaling policy per pool (autoscale.Policy) or to
// replace a crashed one (faults.go).
//
// An instance's life: off → requested (billed from here; ready
// ProvisionNs + LoadNs later: node acquisition, then the weights over the
// storage path) → ready (routable) → draining (not routable; it finishes
// what it holds, and a prefiller keeps serving KV pulls until its held KV
// is gone) → off (billing stops, its caches are cold when it comes back).
// A crash takes a ready or draining instance straight to off.
//
// The router's view gains an instance at its first refresh after the
// instance is ready (Config.RefreshIntervalNs), and loses it the moment it
// drains or crashes: in Dynamo a worker leaves the router's instance list
// when its discovery lease is revoked, and the router sends it nothing
// more (lib/runtime/src/component/client.rs, the instance watch; a
// draining worker deregisters its endpoint before it finishes its
// streams). Kubernetes scales a pool down by deleting pods not yet ready
// before ready ones and newer before older (ReplicaSet controller,
// pkg/controller/replicaset, getPodsToDelete with ActivePodsWithRanks): a
// scale-down here cancels requested instances first, newest first, then
// drains ready ones, newest first.
//
// Cost: a run without Scaling and faults pays one nil check per routing
// decision and per finished request, and one integer test per event.

// PoolScaling sizes one pool of Config.Instances while the run goes on.
// The pool's instances in Config.Instances are all it may ever have (Max);
// the first Initial are ready at time 0, the rest off.
type PoolScaling struct {
	Pool              string
	Initial, Min, Max int

	// IntervalNs is the time between two decisions of the policy;
	// StalenessNs how old the metrics it sees are (scraped that long
	// before the decision).
	IntervalNs, StalenessNs int64

	// ProvisionNs is the time from requesting an instance to its node
	// being there; LoadNs the time to load the model's weights on it.
	ProvisionNs, LoadNs int64

	// Policy decides the pool's size every IntervalNs; nil keeps Initial
	// instances (a crashed one is replaced at once, as a Deployment's
	// controller recreates a lost pod).
	Policy autoscale.Policy
}

// Instance lifecycle states.
type lifeState uint8

const (
	lifeOff lifeState = iota
	lifeRequested
	lifeReady
	lifeDraining
	numLife
)

// FleetPoint is one pool's instance counts from AtNs on.
type FleetPoint struct {
	AtNs                       int64
	Ready, Requested, Draining int
}

// PoolFleet is a pool's instance counts over the run, at every change.
type PoolFleet struct {
	Pool   string
	Points []FleetPoint
}

// fleetEvent kinds, the top byte of a classFleet event's arg.
const (
	evReady    = iota // instance ready
	evScrape          // a pool's metrics scraped for a later decision
	evDecide          // a pool's policy decides
	evVisible         // a refresh may show a newly ready instance: offer held requests again
	evFault           // a fault begins (faults.go)
	evFaultEnd        // a fault's window ends
)

// classFleet orders fleet and fault events after everything else due at
// the same instant.
const classFleet = classKick + 1

// fleet is the changing-fleet state of a run; nil when it has none.
type fleet struct {
	pools      []poolState
	drains     []int32 // instances draining
	pending    []deadline
	failedAt   map[int64]int64 // per request failed over, until its new first token: when
	times      []lifeTimes     // per instance
	scaleUpsNs []int64         // per instance made ready: from its request
	faults     []Fault
	linkOn     [][]int32 // per link: faults active on it
	slowOn     [][]int32 // per instance: stragglers active on it
	baseCaps   []float64
	billedNs   []int64 // per instance: time it was billed for (closed spells)
	failovers  []int64 // per instance: requests failed over from it
	crashes    []int64
}

// lifeTimes are when an instance entered its state, was last requested,
// and is due ready.
type lifeTimes struct {
	sinceNs, requestedNs, readyAtNs int64
}

// poolState is one pool's instances and its policy's inputs.
type poolState struct {
	name      string
	scaling   PoolScaling
	members   []int // instance indexes, in configuration order
	count     [numLife]int
	points    []FleetPoint
	traffic   trafficTally
	snaps     []snapshot // scraped, waiting for their decision
	scrapes   int64      // scrapes taken
	scrapedNs int64      // when the last was taken
	decides   int64      // decisions taken
}

// trafficTally is what reached a pool since its last scrape.
type trafficTally struct {
	requests, promptTokens, finished, outputTokens, firsts int64
	ttftNs, tpotNs                                         float64
	tpots                                                  int64
}

// snapshot is a scraped Observation, for decision k.
type snapshot struct {
	k   int64
	obs autoscale.Observation
}

// fleetOn reports whether the configuration changes its fleet.
func (c *Config) fleetOn() bool {
	return len(c.Scaling) > 0 || len(c.Faults) > 0 || c.FaultRates != nil
}

// validateFleet checks the pools' scaling and the faults.
func (c *Config) validateFleet() error {
	seen := map[string]bool{}
	for k := range c.Scaling {
		s := &c.Scaling[k]
		n, dp := 0, false
		for i := range c.Instances {
			if c.Instances[i].Pool == s.Pool {
				n++
				dp = dp || c.Instances[i].DPRanks > 1
			}
		}
		switch {
		case n == 0:
			return fmt.Errorf("sim: scaling: no pool %q", s.Pool)
		case seen[s.Pool]:
			return fmt.Errorf("sim: scaling: pool %q scaled twice", s.Pool)
		case dp:
			return fmt.Errorf("sim: scaling: pool %q has data-parallel ranks, which do not scale here", s.Pool)
		case s.Max != n:
			return fmt.Errorf("sim: scaling: pool %q: max %d, but it has %d instances", s.Pool, s.Max, n)
		case s.Min < 1 || s.Min > s.Max:
			return fmt.Errorf("sim: scaling: pool %q: min %d must be in [1, max %d]", s.Pool, s.Min, s.Max)
		case s.Initial < s.Min || s.Initial > s.Max:
			return fmt.Errorf("sim: scaling: pool %q: initial %d must be in [min %d, max %d]", s.Pool, s.Initial, s.Min, s.Max)
		case s.Policy != nil && s.IntervalNs <= 0:
			return fmt.Errorf("sim: scaling: pool %q: the interval must be positive", s.Pool)
		case s.StalenessNs < 0 || s.ProvisionNs < 0 || s.LoadNs < 0:
			return fmt.Errorf("sim: scaling: pool %q: staleness, provisioning and load times must not be negative", s.Pool)
		}
		seen[s.Pool] = true
	}
	return c.validateFaults()
}

// initFleet builds the pools and sets every instance's first state.
func (c *cluster) initFleet() {
	if !c.cfg.fleetOn() {
		for i := range c.replicas {
			c.replicas[i].life, c.replicas[i].visible = lifeReady, true
		}
		return
	}
	fl := &fleet{failedAt: map[int64]int64{}, times: make([]lifeTimes, len(c.replicas)), billedNs: make([]int64, len(c.replicas)), failovers: make([]int64, len(c.replicas)),
		crashes: make([]int64, len(c.replicas)), slowOn: make([][]int32, len(c.replicas))}
	byName := map[string]int{}
	for i := range c.cfg.Instances {
		name := c.cfg.Instances[i].Pool
		p, ok := byName[name]
		if !ok {
			p = len(fl.pools)
			byName[name] = p
			fl.pools = append(fl.pools, poolState{name: name, scaling: PoolScaling{Pool: name}})
		}
		fl.pools[p].members = append(fl.pools[p].members, i)
		c.replicas[i].pool = int32(p)
	}
	for _, s := range c.cfg.Scaling {
		fl.pools[byName[s.Pool]].scaling = s
	}
	for p := range fl.pools {
		ps := &fl.pools[p]
		if ps.scaling.Max == 0 {
			ps.scaling.Initial, ps.scaling.Min, ps.scaling.Max = len(ps.members), len(ps.members), len(ps.members)
		}
		for k, i := range ps.members {
			if k < ps.scaling.Initial {
				c.replicas[i].life, c.replicas[i].visible = lifeReady, true
				ps.count[lifeReady]++
			}
		}
		ps.points = append(ps.points, ps.point(0))
	}
	c.fleet = fl
}

// startFleet schedules the pools' first scrapes and decisions and the
// faults.
func (c *cluster) startFleet() {
	for p := range c.fleet.pools {
		s := &c.fleet.pools[p].scaling
		if s.Policy == nil {
			continue
		}
		// The scrape first: with no staleness a decision and its scrape
		// fall at the same instant, and the queue keeps the order pushed.
		c.nextScrape(p)
		c.pushFleet(s.IntervalNs, evDecide, p)
	}
	c.startFaults()
}

// pushFleet queues a fleet event of kind on target at atNs.
func (c *cluster) pushFleet(atNs int64, kind, target int) {
	c.q.push(atNs, classFleet, int32(kind<<24|target))
}

// fleetSuperseded reports whether fleet event e is moot: a ready event for
// a request cancelled since, or any fleet event once the run is over (all
// requests ended and no arrival queued) — fleet events alone do not keep
// a run going, nor do they carry the clock to moot events still queued,
// such as the hold deadlines of KV pulled long ago.
func (c *cluster) fleetSuperseded(e *event) bool {
	if c.arrivals == 0 && c.ended == c.recs.next {
		c.retryHeld() // frees the slots of requests abandoned while held
		return true
	}
	if kind, i := int(e.arg>>24), int(e.arg&(1<<24-1)); kind == evReady {
		rp := &c.replicas[i]
		return rp.life != lifeRequested || c.fleet.times[i].readyAtNs != e.at
	}
	return false
}

// onFleet handles a fleet event.
func (c *cluster) onFleet(arg int32) {
	kind, target := int(arg>>24), int(arg&(1<<24-1))
	switch kind {
	case evReady:
		c.ready(target)
	case evScrape:
		c.scrape(target)
	case evDecide:
		c.decide(target)
	case evVisible:
		c.retryHeld()
	case evFault:
		c.faultStarts(target)
	case evFaultEnd:
		c.faultEnds(target)
	}
}

// point is the pool's counts now, at atNs.
func (ps *poolState) point(atNs int64) FleetPoint {
	return FleetPoint{AtNs: atNs, Ready: ps.count[lifeReady], Requested: ps.count[lifeRequested],
		Draining: ps.count[lifeDraining]}
}

// become moves instance i to state to: its pool's counts, its billing
// and the pool's change points follow.
func (c *cluster) become(i int, to lifeState) {
	rp, tm := &c.replicas[i], &c.fleet.times[i]
	ps := &c.fleet.pools[rp.pool]
	from := rp.life
	if from != lifeOff {
		c.fleet.billedNs[i] += c.nowNs - tm.sinceNs
	}
	ps.count[from]--
	ps.count[to]++
	rp.life, tm.sinceNs = to, c.nowNs
	pt := ps.point(c.nowNs)
	if last := &ps.points[len(ps.points)-1]; last.AtNs == c.nowNs {
		*last = pt
	} else {
		ps.points = append(ps.points, pt)
	}
	if c.cfg.Tracer != nil {
		c.cfg.Tracer.Counter(instanceTrack(i), "state (0 off, 1 requested, 2 ready, 3 draining)", c.nowNs, float64(to))
	}
}

// request asks for instance i (off): it is ready after its pool's
// provisioning and load times.
func (c *cluster) request(i int) {
	s, tm := &c.fleet.pools[c.replicas[i].pool].scaling, &c.fleet.times[i]
	c.become(i, lifeRequested)
	tm.requestedNs = c.nowNs
	tm.readyAtNs = c.nowNs + s.ProvisionNs + s.LoadNs
	c.pushFleet(tm.readyAtNs, evReady, i)
}

// ready makes requested instance i ready: routable from the router's next
// refresh.
func (c *cluster) ready(i int) {
	c.become(i, lifeReady)
	c.fleet.scaleUpsNs = append(c.fleet.scaleUpsNs, c.nowNs-c.fleet.times[i].requestedNs)
	c.routing.joined = true
	at := c.nowNs
	if iv := c.cfg.RefreshIntervalNs; iv > 0 && c.routing.refreshed {
		at = max(at, c.routing.lastRefreshNs+iv)
	}
	c.pushFleet(at, evVisible, 0)
}

// drain stops routing to ready instance i; it goes off once it holds
// nothing (checkDrains).
func (c *cluster) drain(i int) {
	c.leave(i)
	c.become(i, lifeDraining)
	c.fleet.drains = append(c.fleet.drains, int32(i))
	c.drainingN++
}

// checkDrains stops the draining instances that hold nothing any more.
func (c *cluster) checkDrains() {
	fl := c.fleet
	kept := fl.drains[:0]
	for _, i := range fl.drains {
		if c.replicas[i].life != lifeDraining {
			continue // crashed meanwhile
		}
		if !c.drained(int(i)) {
			kept = append(kept, i)
			continue
		}
		c.stop(int(i))
	}
	fl.drains = kept
	c.drainingN = len(kept)
}

// drained reports whether instance i has nothing left: no sequence, no
// step, no request routed to it.
func (c *cluster) drained(i int) bool {
	rp := &c.replicas[i]
	return c.engine(i).InFlight() == 0 && rp.eng.Idle() && rp.outstanding == 0 && rp.routed == 0 && rp.prefillTokens == 0 && rp.tokenLoad == 0
}

// stop turns an idle instance off: billing ends and it restarts cold.
func (c *cluster) stop(i int) {
	rp := &c.replicas[i]
	c.become(i, lifeOff)
	c.restartCold(i)
	rp.metrics.progressNs = -1
	rp.staleSeq = c.q.seq // a recompile pause in flight goes moot
}

// leave takes instance i out of the router's view at once.
func (c *cluster) leave(i int) {
	rp := &c.replicas[i]
	if !rp.visible {
		return
	}
	rp.visible = false
	r := &c.routing
	r.view.Prefill = c.dropView(r.view.Prefill, i)
	r.view.Decode = c.dropView(r.view.Decode, i)
}

// dropView takes instance i's view out of the list vs, if there, and
// renumbers the positions behind it.
func (c *cluster) dropView(vs []router.View, i int) []router.View {
	r := &c.routing
	kept := vs[:0]
	for _, v := range vs {
		if v.Index != i {
			r.slots[v.Index] = int32(len(kept))
			kept = append(kept, v)
		}
	}
	if len(kept) < len(vs) {
		r.slots[i], r.relisted = -1, true
	}
	return kept
}

// rebuildViews lists, at a refresh, every ready instance in the router's
// view, with the router's bookkeeping (the instances' state is the
// caller's to fill).
func (c *cluster) rebuildViews() {
	r := &c.routing
	r.joined, r.relisted = false, true
	r.view.Prefill = c.readyViews(r.view.Prefill[:0], c.prefillIdx)
	r.view.Decode = c.readyViews(r.view.Decode[:0], c.decodeIdx)
}

func (c *cluster) readyViews(dst []router.View, idx []int) []router.View {
	r := &c.routing
	for _, i := range idx {
		r.slots[i] = -1
		if rp := &c.replicas[i]; rp.life == lifeReady {
			rp.visible = true
			r.slots[i] = int32(len(dst))
			dst = append(dst, router.View{})
			c.fixView(&dst[len(dst)-1], i)
			if r.stateRead {
				c.fillLoad(&dst[len(dst)-1], i)
			}
		}
	}
	return dst
}

// noCandidates reports whether the router has no instance to place a
// request on: none of the prefill (or colocated) instances, or none of the
// decoders, is in its view.
func (c *cluster) noCandidates() bool {
	v := &c.routing.view
	return len(v.Prefill) == 0 || len(c.decodeIdx) > 0 && len(v.Decode) == 0
}

// resize brings pool p to want instances (ready plus requested): off ones
// requested, in configuration order, or requested ones cancelled and
// ready ones drained, newest first.
func (c *cluster) resize(p, want int) {
	ps := &c.fleet.pools[p]
	have := ps.count[lifeReady] + ps.count[lifeRequested]
	for k := 0; k < len(ps.members) && have < want; k++ {
		if i := ps.members[k]; c.replicas[i].life == lifeOff {
			c.request(i)
			have++
		}
	}
	for _, st := range []lifeState{lifeRequested, lifeReady} {
		for k := len(ps.members) - 1; k >= 0 && have > want; k-- {
			i := ps.members[k]
			if c.replicas[i].life != st {
				continue
			}
			if st == lifeRequested {
				c.become(i, lifeOff) // its ready event goes moot
			} else {
				c.drain(i)
			}
			have--
		}
	}
}

// fleetResults adds the fleet's figures to r: billing, crashes and
// fail-overs per instance, each pool's counts, the scale-up latencies.
func (c *cluster) fleetResults(r *Result) {
	fl := c.fleet
	if fl == nil {
		return
	}
	for i := range r.Instances {
		rp := &c.replicas[i]
		in := &r.Instances[i]
		in.BilledNs = fl.billedNs[i]
		if rp.life != lifeOff {
			in.BilledNs += c.nowNs - fl.times[i].sinceNs
		}
		in.Crashes, in.FailedOver = fl.crashes[i], fl.failovers[i]
	}
	for p := range fl.pools {
		ps := &fl.pools[p]
		r.Fleet = append(r.Fleet, PoolFleet{Pool: ps.name, Points: ps.points})
	}
	r.ScaleUpsNs = fl.scaleUpsNs
}
