package sim

import (
	"container/heap"
	"fmt"
	"math"

	"handoff/models/router"
	"handoff/results"
)

// A split run: a fleet whose instances never affect one another, run as
// shards of instances, each a run of its own (package sim/parallel runs
// them on goroutines of their own and merges what they write).
//
// Instances are independent when nothing one does reaches another: every
// instance colocated (no hand-offs), the router round-robin (it reads no
// state an instance changes, so where a request goes depends only on the
// requests before it), and none of what couples instances or orders
// requests by how the run goes — a changing fleet, failures, a closed
// loop or sessions, client time-outs, lower KV tiers (a store is shared,
// and all tiers' reads are flows of one network model, advanced together),
// data-parallel groups (their ranks step together), context-length
// ranges, unequal context capacities (the router's drop test is fleet
// wide), a tracer. Split reads the workload in order, routes it as the
// whole run's router would, in the order requests reach it (a front end
// delays each by its own prompt), and sends each request to the shard of
// the instance round-robin gives it, with that instance; the shard's router sends it there. Within a
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

	// Requests taken in and not yet handed out, in arrival order (the
	// first is the base-th of the run), and those not yet routed by when
	// they reach the router.
	pending  []splitRequest
	base     int
	reaching reachHeap
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
			return "its instances' lower KV tiers read through one network, or share a store"
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

// Add checks the workload's next request as the whole run would and
// takes it in; Next hands it out once its shard is known.
func (s *Split) Add(r *Request) error {
	if r.ArrivalNs < s.lastNs {
		return fmt.Errorf("sim: source went back in time (%d ns after %d ns)", r.ArrivalNs, s.lastNs)
	}
	if err := checkRequest(s.cfg, s.id, r, false); err != nil {
		return err
	}
	r.ID, s.id, s.lastNs = s.id, s.id+1, r.ArrivalNs
	k := len(s.pending)
	s.pending = append(s.pending, splitRequest{req: *r, local: -1})
	if r.PromptTokens+r.OutputTokens > s.capacity { // dropped on arrival: never routed
		s.pending[k].shard, s.pending[k].decided = int(r.ID)%s.shards, true
	} else {
		heap.Push(&s.reaching, reach{atNs: r.ArrivalNs + s.cfg.Frontend.delayNs(r.PromptTokens), pos: s.base + k})
	}
	// A request arriving later reaches the router no sooner than minDelay
	// after this one's arrival, and after those that reach it at the same
	// instant from an earlier arrival: route every one that reaches it by then.
	s.routeUntil(r.ArrivalNs + s.cfg.Frontend.delayNs(1))
	return nil
}

// End says the workload has ended: every request taken in is routed.
func (s *Split) End() { s.routeUntil(math.MaxInt64) }

// routeUntil routes, in the order they reach the router, the requests
// that reach it by atNs: round-robin over every instance.
func (s *Split) routeUntil(atNs int64) {
	for len(s.reaching) > 0 && s.reaching[0].atNs <= atNs {
		x := &s.pending[heap.Pop(&s.reaching).(reach).pos-s.base]
		i := s.next % len(s.cfg.Instances)
		s.next++
		x.shard, x.local, x.decided = i%s.shards, int32(i/s.shards), true
	}
}

// Next returns the next request in arrival order once its shard is known,
// with its shard and its instance there (−1: no instance can hold it, and
// its shard drops it as the whole run does).
func (s *Split) Next() (r Request, shard int, local int32, ok bool) {
	if len(s.pending) == 0 || !s.pending[0].decided {
		return Request{}, 0, 0, false
	}
	x := s.pending[0]
	s.pending, s.base = s.pending[1:], s.base+1
	if len(s.pending) == 0 {
		s.pending = s.pending[:0:0] // let the emptied backing array go
	}
	return x.req, x.shard, x.local, true
}

// splitRequest is a request taken in, and where it goes once decided.
type splitRequest struct {
	req     Request
	shard   int
	local   int32
	decided bool
}

// reach is when a pending request reaches the router; pos is its place in
// arrival order. Ties go to the earlier arrival, as the event queue's push
// order has them.
type reach struct {
	atNs int64
	pos  int
}

// reachHeap orders pending requests by when they reach the router.
type reachHeap []reach

func (h reachHeap) Len() int { return len(h) }
func (h reachHeap) Less(i, j int) bool {
	return h[i].atNs < h[j].atNs || h[i].atNs == h[j].atNs && h[i].pos < h[j].pos
}
func (h reachHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *reachHeap) Push(x any)   { *h = append(*h, x.(reach)) }
func (h *reachHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
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
	if len(parts) > 0 {
		// Every shard runs on the whole topology, and no transfer crosses
		// it (the instances are colocated, without lower tiers): each
		// shard's links are the whole run's, idle.
		r.Links = parts[0].Links
	}
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

// pinned is a shard's router: it sends each request to the instance Split
// chose for it, by the shard's ID of the request.
type pinned struct {
	targets []pin // by ID − base
	base    int64

	// routedID is the whole run's ID of the request routed last, which
	// keys its content (fillSeq): its attempt is filled as it is routed.
	routedID int64
}

// pin is a shard's request as Split sent it: its instance (−1 once routed,
// or for one never routed) and its ID in the whole run.
type pin struct {
	instance int32
	id       int64
}

// Route implements router.Router.
func (p *pinned) Route(r *router.Request, _ *router.Cluster) router.Decision {
	k := r.ID - p.base
	if k < 0 || k >= int64(len(p.targets)) || p.targets[k].instance < 0 {
		panic(fmt.Sprintf("sim: a shard routed request %d twice, or one it was not sent (simulator bug: split.go's conditions let a coupled run split)", r.ID))
	}
	i := p.targets[k].instance
	p.targets[k].instance, p.routedID = -1, p.targets[k].id
	n := 0
	for n < len(p.targets) && p.targets[n].instance < 0 { // routed, or dropped on arrival: forget the oldest
		n++
	}
	p.targets, p.base = p.targets[n:], p.base+int64(n)
	return router.Decision{Prefill: int(i), Decode: -1}
}

// ReadsState implements router.StateReader.
func (*pinned) ReadsState() bool { return false }

// pinnedSource is a shard's Source: it reads the shard's requests and
// keeps each one's instance, by the ID the shard gives it, for the router.
type pinnedSource struct {
	src RoutedSource
	pin *pinned
	n   int64 // requests read
}

// Next implements Source.
func (s *pinnedSource) Next(r *Request) (bool, error) {
	i, ok, err := s.src.Next(r)
	if !ok || err != nil {
		return ok, err
	}
	if len(s.pin.targets) == 0 {
		s.pin.base = s.n
	}
	s.pin.targets = append(s.pin.targets, pin{instance: i, id: r.ID})
	s.n++
	return true, nil
}
