package sim

import (
	"fmt"

	"handoff/models/router"
	"handoff/results"
)

// A split run: a fleet whose instances never affect one another, run as
// shards of instances, each a run of its own (package sim/parallel runs
// them on cores of their own and merges what they write).
//
// Instances are independent when nothing one does reaches another: every
// instance colocated (no hand-offs), the router round-robin (it reads no
// state an instance changes, so where a request goes depends only on the
// requests before it), and none of what couples instances or orders
// requests by how the run goes — a changing fleet, failures, a closed
// loop or sessions, client time-outs, a front end (which reorders requests
// by their prompts), lower KV tiers (their links and stores are shared),
// data-parallel groups (their ranks step together), context-length
// ranges, unequal context capacities (the router's drop test is fleet
// wide), a tracer. Split reads the workload in order, as the router would,
// and sends each request to the shard of the instance round-robin gives
// it, with that instance; the shard's router sends it there. Within a
// shard the events are those of the whole run, less the other shards',
// and since no event of another shard changes an instance or a request of
// this one, every request's record and every instance's counters and
// timeline are the same. What a shard cannot know — the whole run's end,
// which bills the instances and ends the timelines, and the order of
// lock-up chains first seen at one instant across shards — Merge settles.
//
// The event count is the one thing that differs: a plan deferred behind
// another shard's event at the same instant is an event in the whole run
// (classKick) and not in the shard. It measures the core's work, not the
// model, as wall time does.

// Split divides a run into shards of instances that never affect one
// another.
type Split struct {
	cfg      *Config
	shards   int
	capacity int   // tokens every instance can hold
	next     int   // round-robin's next position
	id       int64 // the next request's ID
	lastNs   int64 // the last request's arrival
}

// RoutedSource is a shard's workload: its requests in arrival order, each
// with the shard's instance it was routed to (−1: one no instance can
// hold, which the shard drops as the whole run does).
type RoutedSource interface {
	Next(r *Request) (instance int32, ok bool, err error)
}

// NewSplit returns cfg divided into min(shards, instances) shards, or nil
// and, in a few words, why its instances may affect one another.
func NewSplit(cfg *Config, shards int) (*Split, string) {
	if len(cfg.Instances) < 2 || shards < 2 {
		return nil, "there is one instance or one core"
	}
	if why := coupled(cfg); why != "" {
		return nil, why
	}
	return &Split{cfg: cfg, shards: min(shards, len(cfg.Instances)), capacity: cfg.Instances[0].Engine.CapacityTokens()}, ""
}

// coupled says why cfg's instances may affect one another, or "".
func coupled(cfg *Config) string {
	if _, ok := cfg.Router.(*router.RoundRobin); !ok {
		return "its router reads state the instances change (only round_robin does not)"
	}
	switch {
	case cfg.Scaling != nil || cfg.Faults != nil || cfg.FaultRates != nil:
		return "its fleet changes or fails"
	case cfg.Client.Concurrency > 0:
		return "a closed loop's users send as their requests end"
	case cfg.Client.timeouts():
		return "its client gives up on requests"
	case cfg.Frontend != Frontend{}:
		return "its front end hands requests to the router out of arrival order"
	case cfg.Tracer != nil:
		return "it traces journeys"
	}
	if _, ok := cfg.Source.(SessionSource); ok {
		return "a session's turns are sent as the turns before them end"
	}
	capacity := cfg.Instances[0].Engine.CapacityTokens()
	for i := range cfg.Instances {
		in := &cfg.Instances[i]
		switch {
		case in.Role != RoleColocated:
			return "its prefill and decode instances hand requests to each other"
		case len(in.Engine.Tiers) > 0:
			return "its instances share lower KV tiers' links and stores"
		case in.DPRanks > 1:
			return "its data-parallel ranks step together"
		case in.ContextRange[1] > 0:
			return "its instances have context-length ranges"
		case in.Engine.CapacityTokens() != capacity:
			return "its instances hold different context lengths"
		}
	}
	return ""
}

// Shards returns how many shards the run is divided into.
func (s *Split) Shards() int { return s.shards }

// Instance returns the whole run's index of shard k's instance local:
// shard k has instances k, k + shards, k + 2·shards, ….
func (s *Split) Instance(k int, local int32) int32 { return local*int32(s.shards) + int32(k) }

// Route checks the workload's next request as the whole run would, and
// returns the shard that serves it and its instance there (−1 for one no
// instance can hold).
func (s *Split) Route(r *Request) (shard int, local int32, err error) {
	if r.ArrivalNs < s.lastNs {
		return 0, 0, fmt.Errorf("sim: source went back in time (%d ns after %d ns)", r.ArrivalNs, s.lastNs)
	}
	if err := checkRequest(s.cfg, s.id, r, false); err != nil {
		return 0, 0, err
	}
	r.ID, s.id, s.lastNs = s.id, s.id+1, r.ArrivalNs
	i := s.next % len(s.cfg.Instances)
	if r.PromptTokens+r.OutputTokens > s.capacity {
		return i % s.shards, -1, nil // dropped before routing: round-robin does not move on
	}
	s.next++
	return i % s.shards, int32(i / s.shards), nil
}

// Shard returns shard k's configuration: its instances, src its workload
// (Route's, in order), its records to rec.
func (s *Split) Shard(k int, src RoutedSource, rec RecordSink) *Config {
	c := *s.cfg
	c.Instances = nil
	for i := k; i < len(s.cfg.Instances); i += s.shards {
		c.Instances = append(c.Instances, s.cfg.Instances[i])
	}
	pin := &pinned{}
	c.Router, c.Source, c.Records = pin, &pinnedSource{src: src, pin: pin}, rec
	c.Progress, c.shard = nil, true
	return &c
}

// Merge joins the shards' results, in shard order, into the whole run's.
// Records and Sink are the caller's: it has merged the shards' records.
func (s *Split) Merge(parts []*Result) *Result {
	r := &Result{ITL: &results.Histogram{}, Instances: make([]InstanceResult, len(s.cfg.Instances))}
	var seen []int64
	for _, p := range parts {
		r.Requests, r.Events = r.Requests+p.Requests, r.Events+p.Events
		r.SimTimeNs = max(r.SimTimeNs, p.SimTimeNs)
		r.ITL.Merge(p.ITL)
		r.Runs.add(p.Runs)
		r.LockupChains, seen = append(r.LockupChains, p.LockupChains...), append(seen, p.chainSeenNs...)
	}
	sortChains(r.LockupChains, seen)
	if s.cfg.TimelineIntervalNs > 0 {
		r.Timelines = make([]Timeline, len(s.cfg.Instances))
	}
	for k, p := range parts {
		if r.Timelines != nil {
			p.tail.extend(p.Timelines, r.SimTimeNs)
		}
		for j, in := range p.Instances {
			g := s.Instance(k, int32(j))
			in.BilledNs = r.SimTimeNs // a fixed fleet is paid for the whole run
			r.Instances[g] = in
			if r.Timelines != nil {
				r.Timelines[g] = p.Timelines[j]
			}
		}
	}
	return r
}

// add adds o's counts to s.
func (s *RunStats) add(o RunStats) {
	s.Steps, s.Priced, s.Dropped = s.Steps+o.Steps, s.Priced+o.Priced, s.Dropped+o.Dropped
	s.Ties, s.Moot = s.Ties+o.Ties, s.Moot+o.Moot
}

// timelineTail is how a shard's timelines go on past its last event: its
// instances' state no longer changes, so each later grid point samples
// the state at its end, the preemptions still pending in the first.
type timelineTail struct {
	t     timelines
	final []Sample
}

// timelineTail returns the shard's tail once its timelines reach its end.
func (c *cluster) timelineTail() *timelineTail {
	if c.tl.list == nil {
		return nil
	}
	tail := &timelineTail{t: c.tl, final: make([]Sample, len(c.replicas))}
	for i := range c.replicas {
		tail.final[i] = c.stateOf(i)
	}
	return tail
}

// extend samples list, the shard's timelines, on to the whole run's end,
// as the whole run's sampling would (sampleToEnd).
func (tail *timelineTail) extend(list []Timeline, endNs int64) {
	t := tail.t
	t.list = list
	for !t.ended(endNs) {
		for i := range t.list {
			t.take(i, tail.final[i])
		}
		t.advance()
	}
}

// pinned is a shard's router: it sends each request to the instance Route
// chose, in the order the shard routes them (arrival order: nothing in a
// split run holds or reorders a request before the router).
type pinned struct {
	fifo []int32
	head int
}

// Route implements router.Router.
func (p *pinned) Route(_ *router.Request, _ *router.Cluster) router.Decision {
	if p.head == len(p.fifo) {
		panic("sim: a shard routed a request twice (simulator bug: split.go's conditions let a coupled run split)")
	}
	i := p.fifo[p.head]
	if p.head++; p.head == len(p.fifo) {
		p.fifo, p.head = p.fifo[:0], 0
	}
	return router.Decision{Prefill: int(i), Decode: -1}
}

// ReadsState implements router.StateReader.
func (*pinned) ReadsState() bool { return false }

// pinnedSource is a shard's Source: it reads the shard's requests and
// queues each routed one's instance for the shard's router.
type pinnedSource struct {
	src RoutedSource
	pin *pinned
}

// Next implements Source.
func (s *pinnedSource) Next(r *Request) (bool, error) {
	i, ok, err := s.src.Next(r)
	if ok && err == nil && i >= 0 {
		s.pin.fifo = append(s.pin.fifo, i)
	}
	return ok, err
}
