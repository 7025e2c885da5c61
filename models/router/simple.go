package router

// RoundRobin cycles through each leg's candidates independently.
type RoundRobin struct {
	nextPrefill, nextDecode int
}

// Route implements Router.
func (rr *RoundRobin) Route(_ *Request, c *Cluster) Decision {
	d := Decision{Prefill: c.Prefill[rr.nextPrefill%len(c.Prefill)].Index, Decode: -1}
	rr.nextPrefill++
	if len(c.Decode) > 0 {
		d.Decode = c.Decode[rr.nextDecode%len(c.Decode)].Index
		rr.nextDecode++
	}
	return d
}

// ReadsState implements StateReader: it reads only the candidates'
// indexes.
func (*RoundRobin) ReadsState() bool { return false }

// LeastLoaded picks, for each leg, the instance with the fewest outstanding
// requests (routed there and not finished there); ties go to the lowest
// index, so the choice is deterministic.
type LeastLoaded struct{}

// Route implements Router.
func (LeastLoaded) Route(_ *Request, c *Cluster) Decision {
	d := Decision{Prefill: leastOutstanding(c.Prefill), Decode: -1}
	if len(c.Decode) > 0 {
		d.Decode = leastOutstanding(c.Decode)
	}
	return d
}

func leastOutstanding(vs []View) int {
	best := 0
	for i := range vs {
		if vs[i].Outstanding < vs[best].Outstanding {
			best = i
		}
	}
	return vs[best].Index
}
