package journey

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"handoff/sim"
)

// The trace format lets slices on one thread nest or follow one another,
// never overlap partially (Perfetto drops such a slice), but the phases of
// requests batched together on one instance overlap all the time. So each
// track is drawn as lanes, one thread each: a request's events on a track
// form chains of properly nested slices, and each chain takes the first
// lane free before it starts. A lane holds one request at a time.

// thread is one lane of a track, a thread of the trace.
type thread struct {
	pid, tid int
	name     string
}

// plan is the recorded events laid out for writing.
type plan struct {
	items    []item // in output order
	tid      []int  // per item
	threads  []thread
	from, to []int // per flow, the item it binds to, or -1
}

// The processes of the trace, in the order of a journey.
const (
	pidRouter    = 1
	pidInstances = 2
	pidLinks     = 3
)

func pidOf(k sim.TrackKind) int {
	switch k {
	case sim.TrackRouter:
		return pidRouter
	case sim.TrackInstance:
		return pidInstances
	}
	return pidLinks
}

// chain is a run of one request's events on one track that nest properly.
type chain struct {
	lo, hi  int64
	open    []item // the slices still open at the last member, outermost first
	members []int  // indexes into the group order
}

// fits reports whether it nests in c after the slices of c that end at or
// before its start are closed (closed-open intervals; instants at one time
// stack). Items come in start order, so closing them is right whatever the
// answer.
func (c *chain) fits(it *item) bool {
	for n := len(c.open); n > 0; n-- {
		top := &c.open[n-1]
		if top.endNs > it.startNs || top.endNs == it.startNs && top.startNs == top.endNs && it.startNs == it.endNs {
			break
		}
		c.open = c.open[:n-1]
	}
	return len(c.open) == 0 || it.endNs <= c.open[len(c.open)-1].endNs
}

// groupOrder sorts items by track, request, start, longest first, then
// recording order.
func groupOrder(a, b item) int {
	return cmp.Or(cmp.Compare(a.track.Kind, b.track.Kind), cmp.Compare(a.track.Index, b.track.Index),
		cmp.Compare(a.id, b.id), cmp.Compare(a.startNs, b.startNs), cmp.Compare(b.endNs, a.endNs),
		cmp.Compare(a.seq, b.seq))
}

// chains splits one group (one request on one track, in group order) into
// chains of properly nested events.
func chains(group []item) []*chain {
	var cs []*chain
	for i := range group {
		it := &group[i]
		k := slices.IndexFunc(cs, func(c *chain) bool { return c.fits(it) })
		if k < 0 {
			cs = append(cs, &chain{lo: it.startNs, hi: it.endNs})
			k = len(cs) - 1
		}
		c := cs[k]
		c.open = append(c.open, *it)
		c.members = append(c.members, i)
		c.hi = max(c.hi, it.endNs)
	}
	return cs
}

// assignLanes packs a track's chains (sorted by start) onto lanes: each
// takes the first lane whose last chain ended strictly before it starts.
// It returns the lane of each chain and the number of lanes.
func assignLanes(cs []*chain) ([]int, int) {
	var laneEnd []int64
	lanes := make([]int, len(cs))
	for i, c := range cs {
		k := slices.IndexFunc(laneEnd, func(end int64) bool { return end < c.lo })
		if k < 0 {
			laneEnd = append(laneEnd, math.MinInt64)
			k = len(laneEnd) - 1
		}
		laneEnd[k] = c.hi
		lanes[i] = k
	}
	return lanes, len(laneEnd)
}

// trackChain is a chain with the request it belongs to.
type trackChain struct {
	id int64
	c  *chain
}

// laneItems sorts items into group order and returns each one's lane and
// the number of lanes of every track that has events.
// Cost: O(n log n + n·lanes) for n items.
func laneItems(items []item) (lane []int, lanes map[sim.Track]int) {
	slices.SortFunc(items, groupOrder)
	perTrack := map[sim.Track][]trackChain{}
	for lo := 0; lo < len(items); {
		hi := lo + 1
		for hi < len(items) && items[hi].track == items[lo].track && items[hi].id == items[lo].id {
			hi++
		}
		for _, c := range chains(items[lo:hi]) {
			for k := range c.members {
				c.members[k] += lo // index into items
			}
			perTrack[items[lo].track] = append(perTrack[items[lo].track], trackChain{items[lo].id, c})
		}
		lo = hi
	}
	lane, lanes = make([]int, len(items)), map[sim.Track]int{}
	for t, tcs := range perTrack {
		slices.SortStableFunc(tcs, func(a, b trackChain) int {
			return cmp.Or(cmp.Compare(a.c.lo, b.c.lo), cmp.Compare(a.id, b.id))
		})
		cs := make([]*chain, len(tcs))
		for i := range tcs {
			cs[i] = tcs[i].c
		}
		chainLane, n := assignLanes(cs)
		for i, c := range cs {
			for _, m := range c.members {
				lane[m] = chainLane[i]
			}
		}
		lanes[t] = n
	}
	return lane, lanes
}

// threadsOf numbers the lanes of every track: the router and each instance
// get at least one thread, a link only if a traced transfer crossed it.
// It returns the first thread id of each track and the threads in order.
func (r *Recorder) threadsOf(lanes map[sim.Track]int) (map[sim.Track]int, []thread) {
	tracks := []sim.Track{{Kind: sim.TrackRouter}}
	for i := range r.instances {
		tracks = append(tracks, sim.Track{Kind: sim.TrackInstance, Index: i})
	}
	for t := range lanes {
		if !slices.Contains(tracks, t) {
			tracks = append(tracks, t)
		}
	}
	slices.SortFunc(tracks, func(a, b sim.Track) int {
		return cmp.Or(cmp.Compare(pidOf(a.Kind), pidOf(b.Kind)), cmp.Compare(a.Index, b.Index))
	})
	first, next := map[sim.Track]int{}, map[int]int{}
	var threads []thread
	for _, t := range tracks {
		pid := pidOf(t.Kind)
		first[t] = next[pid] + 1
		for k := range max(lanes[t], 1) {
			next[pid]++
			name := r.trackName(t)
			if k > 0 {
				name += " lane " + strconv.Itoa(k+1)
			}
			threads = append(threads, thread{pid: pid, tid: next[pid], name: name})
		}
	}
	return first, threads
}

// trackName names a track: "router", an instance with its pool and role, or
// a link.
func (r *Recorder) trackName(t sim.Track) string {
	switch {
	case t.Kind == sim.TrackRouter:
		return "router"
	case t.Kind == sim.TrackInstance && t.Index >= 0 && t.Index < len(r.instances):
		return r.instances[t.Index]
	case t.Kind == sim.TrackInstance:
		return "instance " + strconv.Itoa(t.Index)
	case t.Index >= 0 && t.Index < len(r.links):
		return r.links[t.Index]
	}
	return "link " + strconv.Itoa(t.Index)
}

// bind picks the event of one request's group on a track that a flow end
// at atNs attaches to: the innermost span around atNs, else an instant at
// atNs, else (out: the flow leaves) the last event ending before atNs or
// (in) the first starting after it, else the nearest end of the group.
// It returns an index into group, or -1 for an empty group.
func bind(group []item, atNs int64, out bool) int {
	best := -1
	for i := range group {
		it := &group[i]
		if it.startNs > atNs || it.endNs < atNs {
			continue
		}
		if best < 0 || better(it, &group[best]) {
			best = i
		}
	}
	if best >= 0 || len(group) == 0 {
		return best
	}
	if out {
		for i := len(group) - 1; i >= 0; i-- {
			if group[i].endNs <= atNs {
				return i
			}
		}
		return 0
	}
	for i := range group {
		if group[i].startNs >= atNs {
			return i
		}
	}
	return len(group) - 1
}

// better reports whether a is a closer binding than b among events around
// one time: a span over an instant, then the later start, then the shorter.
func better(a, b *item) bool {
	if a.instant != b.instant {
		return !a.instant
	}
	if a.startNs != b.startNs {
		return a.startNs > b.startNs
	}
	return a.endNs < b.endNs
}

// groupSpan is the range of one request's events on one track in group
// order.
type groupSpan struct{ lo, hi int }

type groupKey struct {
	track sim.Track
	id    int64
}

// layout lays the recorded events out for writing: lanes, threads, flow
// bindings and the output order (time, then process, longest first, then
// thread, request, name and recording order, so that equal runs write equal
// bytes and a parent slice precedes its children).
// Cost: O(n log n + n·lanes + flows·events per request) for n events.
func (r *Recorder) layout() plan {
	items := slices.Clone(r.items)
	lane, lanes := laneItems(items)
	first, threads := r.threadsOf(lanes)
	groups := map[groupKey]groupSpan{}
	for i := range items {
		k := groupKey{items[i].track, items[i].id}
		g, ok := groups[k]
		if !ok {
			g.lo = i
		}
		g.hi = i + 1
		groups[k] = g
	}
	bindEnd := func(id int64, t sim.Track, atNs int64, out bool) int {
		g, ok := groups[groupKey{t, id}]
		if !ok {
			return -1
		}
		return g.lo + bind(items[g.lo:g.hi], atNs, out)
	}
	order := make([]int, len(items))
	tid := make([]int, len(items))
	for i := range items {
		order[i], tid[i] = i, first[items[i].track]+lane[i]
	}
	slices.SortFunc(order, func(a, b int) int { return outputOrder(&items[a], &items[b], tid[a], tid[b]) })
	pos := make([]int, len(items))
	p := plan{threads: threads}
	for k, i := range order {
		pos[i] = k
		p.items, p.tid = append(p.items, items[i]), append(p.tid, tid[i])
	}
	for _, f := range r.flows {
		from, to := bindEnd(f.id, f.from, f.fromNs, true), bindEnd(f.id, f.to, f.toNs, false)
		if from >= 0 && to >= 0 {
			from, to = pos[from], pos[to]
		} else {
			from, to = -1, -1
		}
		p.from, p.to = append(p.from, from), append(p.to, to)
	}
	return p
}

func outputOrder(a, b *item, tidA, tidB int) int {
	return cmp.Or(cmp.Compare(a.startNs, b.startNs), cmp.Compare(pidOf(a.track.Kind), pidOf(b.track.Kind)),
		cmp.Compare(b.endNs, a.endNs), cmp.Compare(tidA, tidB), boolOrder(a.instant, b.instant),
		cmp.Compare(a.id, b.id), cmp.Compare(a.name, b.name), cmp.Compare(a.seq, b.seq))
}

// boolOrder puts false first.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
