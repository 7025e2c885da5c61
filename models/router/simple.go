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
// index, so the choice is deterministic. Reindexed (Indexer), it keeps
// each leg's outstanding counts in a tournament tree: a choice costs
// O(1) and a changed view O(log n).
type LeastLoaded struct {
	legs    [2]minTree // prefill, decode
	indexed bool
}

// Route implements Router.
func (l *LeastLoaded) Route(_ *Request, c *Cluster) Decision {
	d := Decision{Prefill: l.least(c.Prefill, 0), Decode: -1}
	if len(c.Decode) > 0 {
		d.Decode = l.least(c.Decode, 1)
	}
	return d
}

// ReadsInstanceState implements InstanceStateReader: it reads only the
// router's bookkeeping.
func (*LeastLoaded) ReadsInstanceState() bool { return false }

// Reindex implements Indexer.
func (l *LeastLoaded) Reindex(c *Cluster) {
	for leg, vs := range [][]View{c.Prefill, c.Decode} {
		l.legs[leg].reset(len(vs), func(k int) float64 { return float64(vs[k].Outstanding) })
	}
	l.indexed = true
}

// Changed implements Indexer.
func (l *LeastLoaded) Changed(c *Cluster, decode bool, k int) {
	if decode {
		l.legs[1].set(k, float64(c.Decode[k].Outstanding))
	} else {
		l.legs[0].set(k, float64(c.Prefill[k].Outstanding))
	}
}

// least returns the instance index of the least loaded view of vs, leg
// leg.
func (l *LeastLoaded) least(vs []View, leg int) int {
	if !l.indexed {
		return vs[leastOutstanding(vs)].Index
	}
	k, _ := l.legs[leg].min()
	return vs[k].Index
}

// leastOutstanding returns the position of the first view with the
// fewest outstanding requests: the scan the index stands for.
func leastOutstanding(vs []View) int {
	best := 0
	for i := range vs {
		if vs[i].Outstanding < vs[best].Outstanding {
			best = i
		}
	}
	return best
}
