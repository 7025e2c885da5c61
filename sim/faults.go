package sim

import (
	"fmt"
	"slices"
)

// Faults: instance crashes, links down or degraded, stragglers — each
// scheduled in Config.Faults or drawn from Config.FaultRates with the
// run's seed, each an event of the run (and a counter in the journey
// trace).
//
//   - A crash takes a ready or draining instance off at once: the step in
//     flight, its KV and its prefix cache are lost, and every request with
//     state on it fails over (failover.go). A pool without a policy
//     requests a replacement at once (ready after its provisioning and
//     load times); a pool with one is resized by its next decision. A
//     crash of an instance that is off or still being provisioned does
//     nothing.
//   - A link down carries nothing for its window: the transfers on it
//     stall, keeping the bytes they have left, and resume when it comes
//     back — RDMA's reliable connections retransmit until the path heals
//     (or their retry count runs out, which is not modelled). A degraded
//     link carries Factor of its capacity for the window; the transfers
//     sharing it are re-solved max-min at both ends of the window.
//   - A straggler's steps take Factor times as long for the window (a
//     thermally throttled or noisy-neighbour GPU): every step that starts
//     inside it.
//
// Overlapping windows on one link or instance compound (their factors
// multiply).

// FaultKind says what goes wrong.
type FaultKind uint8

// The fault kinds.
const (
	FaultCrash FaultKind = iota
	FaultLinkDown
	FaultLinkDegrade
	FaultStraggler
)

var faultNames = [...]string{"crash", "link_down", "link_degrade", "straggler"}

// String names the kind as scenarios do.
func (k FaultKind) String() string { return faultNames[k] }

// Fault is one thing that goes wrong at AtNs: to Instance (an index into
// Config.Instances: crash, straggler) or Link (an index into the run's
// network links, the topology's first: link_down, link_degrade), for
// DurationNs (not for a crash), scaling its link's capacity or its
// instance's step times by Factor (degrade: (0, 1); straggler: > 1).
type Fault struct {
	Kind       FaultKind
	Instance   int
	Link       int
	AtNs       int64
	DurationNs int64
	Factor     float64
}

// FaultRates draws faults from the run's seed (stream "faults"), until
// UntilNs: per instance, crashes with exponential gaps of mean
// CrashMTBFNs, and straggler windows of StragglerNs with gaps of mean
// StragglerMTBFNs slowing its steps by StragglerFactor. A zero mean draws
// none of that kind.
type FaultRates struct {
	UntilNs                      int64
	CrashMTBFNs, StragglerMTBFNs int64
	StragglerNs                  int64
	StragglerFactor              float64
}

// validateFaults checks the faults against the cluster.
func (c *Config) validateFaults() error {
	links := 0
	if c.Topology != nil {
		links = len(c.Topology.Caps)
	}
	for k, f := range c.Faults {
		name := fmt.Sprintf("sim: fault %d (%s)", k, f.Kind)
		switch {
		case int(f.Kind) >= len(faultNames):
			return fmt.Errorf("sim: fault %d: unknown kind %d", k, f.Kind)
		case f.AtNs < 0:
			return fmt.Errorf("%s: time %d ns is before the run", name, f.AtNs)
		case f.Kind != FaultCrash && f.DurationNs <= 0:
			return fmt.Errorf("%s: the duration must be positive", name)
		case (f.Kind == FaultCrash || f.Kind == FaultStraggler) && (f.Instance < 0 || f.Instance >= len(c.Instances)):
			return fmt.Errorf("%s: no instance %d", name, f.Instance)
		case (f.Kind == FaultLinkDown || f.Kind == FaultLinkDegrade) && (f.Link < 0 || f.Link >= links):
			return fmt.Errorf("%s: no link %d in the topology", name, f.Link)
		case f.Kind == FaultLinkDegrade && !(f.Factor > 0 && f.Factor < 1):
			return fmt.Errorf("%s: the factor must be in (0, 1)", name)
		case f.Kind == FaultStraggler && !(f.Factor > 1):
			return fmt.Errorf("%s: the factor must be above 1", name)
		case (f.Kind == FaultCrash || f.Kind == FaultStraggler) && c.Instances[f.Instance].DPRanks > 1:
			return fmt.Errorf("%s: instance %s is a data-parallel rank, whose faults are not modelled",
				name, c.Instances[f.Instance].Name)
		}
	}
	if r := c.FaultRates; r != nil {
		switch {
		case r.UntilNs <= 0 || r.CrashMTBFNs < 0 || r.StragglerMTBFNs < 0:
			return fmt.Errorf("sim: fault rates: the horizon must be positive and the means not negative")
		case r.StragglerMTBFNs > 0 && (r.StragglerNs <= 0 || !(r.StragglerFactor > 1)):
			return fmt.Errorf("sim: fault rates: stragglers need a positive duration and a factor above 1")
		}
		for i := range c.Instances {
			if c.Instances[i].DPRanks > 1 {
				return fmt.Errorf("sim: fault rates: instance %s is a data-parallel rank, whose faults are not modelled",
					c.Instances[i].Name)
			}
		}
	}
	return nil
}

// drawFaults appends the faults FaultRates draws to the scheduled ones,
// in time order (ties: scheduled first, then by instance).
func (c *cluster) drawFaults() []Fault {
	out := append([]Fault(nil), c.cfg.Faults...)
	r := c.cfg.FaultRates
	if r == nil {
		return out
	}
	rng := NewStreams(c.cfg.Seed).Stream("faults")
	for i := range c.cfg.Instances {
		for at := int64(0); r.CrashMTBFNs > 0; {
			if at += int64(rng.ExpFloat64() * float64(r.CrashMTBFNs)); at >= r.UntilNs {
				break
			}
			out = append(out, Fault{Kind: FaultCrash, Instance: i, AtNs: at})
		}
		for at := int64(0); r.StragglerMTBFNs > 0; {
			if at += int64(rng.ExpFloat64() * float64(r.StragglerMTBFNs)); at >= r.UntilNs {
				break
			}
			out = append(out, Fault{Kind: FaultStraggler, Instance: i, AtNs: at, DurationNs: r.StragglerNs,
				Factor: r.StragglerFactor})
			at += r.StragglerNs
		}
	}
	slices.SortStableFunc(out, func(a, b Fault) int { return int(max(-1, min(1, a.AtNs-b.AtNs))) })
	return out
}

// startFaults queues every fault.
func (c *cluster) startFaults() {
	fl := c.fleet
	fl.faults = c.drawFaults()
	if c.net != nil {
		fl.linkOn = make([][]int32, c.net.Links())
	}
	for k, f := range fl.faults {
		c.pushFleet(f.AtNs, evFault, k)
	}
}

// faultStarts applies fault k.
func (c *cluster) faultStarts(k int) {
	fl := c.fleet
	f := &fl.faults[k]
	switch f.Kind {
	case FaultCrash:
		c.crash(f.Instance)
		return
	case FaultStraggler:
		fl.slowOn[f.Instance] = append(fl.slowOn[f.Instance], int32(k))
		c.slowdown(f.Instance)
	default:
		fl.linkOn[f.Link] = append(fl.linkOn[f.Link], int32(k))
		c.linkCapacity(f.Link)
	}
	c.pushFleet(f.AtNs+f.DurationNs, evFaultEnd, k)
}

// faultEnds ends fault k's window.
func (c *cluster) faultEnds(k int) {
	fl := c.fleet
	f := &fl.faults[k]
	if f.Kind == FaultStraggler {
		fl.slowOn[f.Instance] = slices.DeleteFunc(fl.slowOn[f.Instance], func(j int32) bool { return int(j) == k })
		c.slowdown(f.Instance)
		return
	}
	fl.linkOn[f.Link] = slices.DeleteFunc(fl.linkOn[f.Link], func(j int32) bool { return int(j) == k })
	c.linkCapacity(f.Link)
}

// slowdown sets instance i's step-time factor from its active stragglers,
// ending its run first: the steps after the one in flight take the new
// factor.
func (c *cluster) slowdown(i int) {
	c.touch(i)
	factor := 0.0 // none
	for _, k := range c.fleet.slowOn[i] {
		factor = max(factor, 1) * c.fleet.faults[k].Factor
	}
	c.replicas[i].slow = factor
	if c.cfg.Tracer != nil {
		c.cfg.Tracer.Counter(instanceTrack(i), "step-time factor", c.nowNs, max(factor, 1))
	}
}

// linkCapacity sets link l's capacity from its active faults.
func (c *cluster) linkCapacity(l int) {
	fl := c.fleet
	if fl.baseCaps == nil {
		fl.baseCaps = make([]float64, c.net.Links())
		for j := range fl.baseCaps {
			fl.baseCaps[j] = c.net.Capacity(j)
		}
	}
	bps := fl.baseCaps[l]
	for _, k := range fl.linkOn[l] {
		if f := &fl.faults[k]; f.Kind == FaultLinkDown {
			bps = 0
		} else {
			bps *= f.Factor
		}
	}
	c.net.SetCapacity(l, bps, c.nowNs)
	c.netAtNs = -1 // re-predict: the rates changed
	c.scheduleNetwork()
	if c.cfg.Tracer != nil {
		c.cfg.Tracer.Counter(Track{Kind: TrackLink, Index: l}, "capacity (GB/s)", c.nowNs, bps/1e9)
	}
}

// crash takes instance i down: its requests fail over, its engine restarts
// cold, and it is off (replaced at once in a pool without a policy).
func (c *cluster) crash(i int) {
	rp := &c.replicas[i]
	if rp.life != lifeReady && rp.life != lifeDraining {
		return
	}
	c.fleet.crashes[i]++
	c.touch(i)
	c.leave(i)
	c.become(i, lifeOff) // before its requests go again: no refresh may list it
	if rp.pipe != nil {
		c.losePipe(i) // the micro-batches in flight are lost
	} else if rp.eng.Busy() { // the step is lost
		rp.busyNs += c.nowNs - rp.stepStartNs
	}
	rp.staleSeq = c.q.seq // its recompile in flight goes moot
	rp.stepGen++          // and its step
	c.endLock(i)          // its stuck spell, if any, ends with it
	c.completing = i      // no plan on i while its requests leave
	for ref, f := range c.flights.all() {
		if c.hit(f, i) {
			c.crashFlight(ref, i)
		}
	}
	c.completing = -1
	c.dropStranded(i)
	c.restartCold(i)
	rp.metrics.progressNs, rp.abortAfterStep = -1, false
	if c.fleet.pools[rp.pool].scaling.Policy == nil {
		c.request(i)
	}
}
