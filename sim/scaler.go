package sim

import (
	"handoff/models/autoscale"
	"handoff/results"
)

// The autoscaling loop of a pool with a policy. Decision k comes at
// k·IntervalNs and sees the metrics scraped at k·IntervalNs − StalenessNs
// (none, all zero, while that is before the run): the pool's instances'
// means and the traffic since the previous scrape. The instance counts it
// sees are the current ones, as a Kubernetes controller reads a
// Deployment's replicas. Its wish is clamped to [Min, Max] and applied at
// once (resize).

// nextScrape queues pool p's next scrape.
func (c *cluster) nextScrape(p int) {
	ps := &c.fleet.pools[p]
	s := &ps.scaling
	if ps.scrapes == 0 { // the first decision whose scrape falls in the run
		ps.scrapes = max(1, (s.StalenessNs+s.IntervalNs-1)/s.IntervalNs)
	}
	c.pushFleet(ps.scrapes*s.IntervalNs-s.StalenessNs, evScrape, p)
}

// scrape reads pool p's metrics for its decision and queues the next
// scrape.
func (c *cluster) scrape(p int) {
	ps := &c.fleet.pools[p]
	o := autoscale.Observation{}
	ready := 0
	for _, i := range ps.members {
		rp := &c.replicas[i]
		if rp.life != lifeReady {
			continue
		}
		ready++
		c.sync(i)
		pool := rp.eng.Pool()
		o.Waiting += float64(rp.eng.Waiting() + rp.eng.Pulling())
		o.Running += float64(rp.eng.Running())
		o.KVUsage += float64(pool.UsedBlocks()) / float64(pool.NumBlocks())
	}
	if ready > 0 {
		o.Waiting, o.Running, o.KVUsage = o.Waiting/float64(ready), o.Running/float64(ready), o.KVUsage/float64(ready)
	}
	t := &ps.traffic
	o.Requests, o.FinishedCount = int(t.requests), int(t.finished)
	if t.requests > 0 {
		o.MeanInput = float64(t.promptTokens) / float64(t.requests)
	}
	if t.finished > 0 {
		o.MeanOutput = float64(t.outputTokens) / float64(t.finished)
	}
	if t.firsts > 0 {
		o.MeanTTFTNs = t.ttftNs / float64(t.firsts)
	}
	if t.tpots > 0 {
		o.MeanTPOTNs = t.tpotNs / float64(t.tpots)
	}
	// The traffic covers the time since the previous scrape (the first
	// one's, since 0: shorter than an interval under staleness).
	o.IntervalNs, ps.scrapedNs = c.nowNs-ps.scrapedNs, c.nowNs
	ps.traffic = trafficTally{}
	ps.snaps = append(ps.snaps, snapshot{k: ps.scrapes, obs: o})
	ps.scrapes++
	c.nextScrape(p)
}

// decide asks pool p's policy for its size and applies it.
func (c *cluster) decide(p int) {
	ps := &c.fleet.pools[p]
	s := &ps.scaling
	ps.decides++
	var o autoscale.Observation
	if len(ps.snaps) > 0 && ps.snaps[0].k == ps.decides {
		o = ps.snaps[0].obs
		ps.snaps = ps.snaps[:copy(ps.snaps, ps.snaps[1:])]
	}
	if len(ps.snaps) > 0 && ps.snaps[0].k < ps.decides {
		panic("sim: a scrape came after the decision it was for")
	}
	if o.IntervalNs == 0 { // no scrape in the run yet: nothing seen over an interval
		o.IntervalNs = s.IntervalNs
	}
	o.NowNs, o.MinInstances, o.MaxInstances = c.nowNs, s.Min, s.Max
	o.Ready, o.Requested, o.Draining = ps.count[lifeReady], ps.count[lifeRequested], ps.count[lifeDraining]
	want := min(max(s.Policy.Desired(&o), s.Min), s.Max)
	c.resize(p, want)
	c.pushFleet(c.nowNs+s.IntervalNs, evDecide, p)
}

// noteRouted counts a request routed to instance i's pool.
func (c *cluster) noteRouted(i int, promptTokens int) {
	t := &c.fleet.pools[c.replicas[i].pool].traffic
	t.requests++
	t.promptTokens += int64(promptTokens)
}

// noteFirst counts a client's first token in every pool's traffic: the
// front end's TTFT, which Dynamo's planner reads for the whole graph.
func (c *cluster) noteFirst(rec *results.Record) {
	for p := range c.fleet.pools {
		t := &c.fleet.pools[p].traffic
		t.firsts++
		t.ttftNs += float64(rec.FirstTokenNs - rec.ArrivalNs)
	}
}

// noteFinished counts a completed request in every pool's traffic.
func (c *cluster) noteFinished(rec *results.Record) {
	for p := range c.fleet.pools {
		t := &c.fleet.pools[p].traffic
		t.finished++
		t.outputTokens += int64(rec.OutputTokens)
		if rec.OutputTokens > 1 {
			t.tpots++
			t.tpotNs += float64(rec.FinishNs-rec.FirstTokenNs) / float64(rec.OutputTokens-1)
		}
	}
}
