package workload

import (
	"container/heap"

	"handoff/sim"
)

// Merge returns a source that yields the requests of srcs together in
// arrival order, as if their clients shared one front end: IDs are
// renumbered densely from 0; same-time arrivals go to the source listed
// first. Each source keeps its own clock (all start at 0) and contents;
// prefix segments are not renamed, so sources whose segments could
// collide should not be merged. Memory: one pending request per source;
// cost per request: O(log len(srcs)) beyond the sources' own. The
// sources are read on demand, never ahead by more than one request each.
// Session sources cannot be merged (Merge is for plain sources).
func Merge(srcs ...sim.Source) sim.Source {
	if len(srcs) == 1 {
		return srcs[0]
	}
	return &merged{srcs: srcs, refill: -1}
}

type merged struct {
	srcs    []sim.Source
	pending pendingHeap // each unexhausted source's next request
	started bool
	refill  int // the source whose request went out last: read its next before choosing (-1: none)
	nextID  int64
}

// pendingReq is a source's next request.
type pendingReq struct {
	src int
	req sim.Request
}

// pendingHeap orders the pending requests by arrival, then source.
type pendingHeap []pendingReq

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if h[i].req.ArrivalNs != h[j].req.ArrivalNs {
		return h[i].req.ArrivalNs < h[j].req.ArrivalNs
	}
	return h[i].src < h[j].src
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pendingReq)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Next implements sim.Source. The source whose request went out last is
// read again only now, into a fresh request, so a source that builds its
// Prefix in the buffer it is passed never overwrites a request the caller
// holds.
func (m *merged) Next(r *sim.Request) (bool, error) {
	if !m.started {
		m.started = true
		m.pending = make(pendingHeap, 0, len(m.srcs))
		for i, s := range m.srcs {
			p := pendingReq{src: i}
			ok, err := s.Next(&p.req)
			if err != nil {
				return false, err
			}
			if ok {
				m.pending = append(m.pending, p)
			}
		}
		heap.Init(&m.pending)
	} else if m.refill >= 0 {
		top := &m.pending[0]    // the request that went out last is still at the top
		top.req = sim.Request{} // its Prefix is the caller's now: the source must not write into it
		ok, err := m.srcs[top.src].Next(&top.req)
		if err != nil {
			return false, err
		}
		if ok {
			heap.Fix(&m.pending, 0)
		} else {
			heap.Pop(&m.pending)
		}
	}
	if len(m.pending) == 0 {
		m.refill = -1
		return false, nil
	}
	*r = m.pending[0].req
	r.ID = m.nextID
	m.nextID++
	m.refill = m.pending[0].src
	return true, nil
}

// Clamped sums the sources' counts (see Clamper).
func (m *merged) Clamped() Clamps {
	var n Clamps
	for _, s := range m.srcs {
		n = n.plus(ClampedCount(s))
	}
	return n
}
