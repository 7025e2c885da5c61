package sim

import (
	"handoff/models/engine"
	"handoff/models/router"
)

// The router's bookkeeping, as Dynamo's KV router keeps it
// (lib/kv-router/src/sequences/single.rs): the uncached part of the
// prompts it routed to a prefill instance counts until that prefill
// finishes, and a request's full prompt blocks count on the instance that
// decodes it, from when that instance is chosen until the request
// finishes there — shared blocks once, when the router assumes KV reuse.
// llm-d's in-flight token load (its inflight-load producer,
// PreRequest and ResponseBody) counts a request's estimated tokens on each
// instance it is routed to: on a remote prefiller until its prefill ends
// (upstream: the first streamed chunk), on the instance that decodes it
// until it finishes.
// SGLang's PD router holds each worker's load guard (Worker::load) until
// the request's response is done: a prefiller counts the requests it
// prefilled until they finish decoding elsewhere (through, View.Routed).
// Requests the router holds wait here, in order, and are offered again
// whenever that bookkeeping shrinks.

// book records flight ref's placement: the prefill load now, the decode
// load too unless the decoder is chosen after the prefill.
func (c *cluster) book(ref int32) {
	f := c.flights.at(ref)
	f.unbooked = false
	if c.fleet != nil {
		c.noteRouted(f.route.Prefill, f.req.PromptTokens)
		if f.route.Decode >= 0 {
			c.noteRouted(f.route.Decode, f.req.PromptTokens)
		}
	}
	if f.route.Decode >= 0 {
		f.prefillLoad = router.EstimatedTokens(f.req.PromptTokens)
		c.replicas[f.route.Prefill].tokenLoad += f.prefillLoad
	}
	if c.replicas[f.route.Prefill].cfg.Role == RolePrefill {
		c.replicas[f.route.Prefill].through++
		f.viaPrefill = int32(f.route.Prefill) + 1
	}
	f.bookedTokens = max(0, f.req.PromptTokens-f.route.PrefillCached)
	c.replicas[f.route.Prefill].prefillTokens += f.bookedTokens
	c.loadChanged(f.route.Prefill)
	if f.route.Decode != router.DecodeLater {
		c.bookDecode(ref)
	}
}

// bookDecode adds flight ref's blocks to its decoding instance's load.
func (c *cluster) bookDecode(ref int32) {
	f := c.flights.at(ref)
	rp := &c.replicas[decodingInstance(f)]

	c.loadChanged(decodingInstance(f))
	bs := c.routing.view.BlockSize
	f.bookedBlocks = f.req.PromptTokens / bs
	rp.routed++
	f.routedHere = true
	f.decodeLoad = router.EstimatedTokens(f.req.PromptTokens)
	rp.tokenLoad += f.decodeLoad
	if rp.shared == nil {
		rp.blocks += f.bookedBlocks
		return
	}
	f.bookedBlocks -= rp.shared.add(f.req.Prefix, bs)
	rp.blocks = rp.shared.distinct + rp.uniqueBlocks(f.bookedBlocks)
	if rp.shared.first(f.req.Prefix) == 1 {
		c.noteSharing(decodingInstance(f), f.req.Prefix, true)
	}
}

// unbookPrefill ends a flight's prefill bookkeeping.
func (c *cluster) unbookPrefill(f *flight) {
	if f.prefillLoad != 0 {
		c.replicas[f.route.Prefill].tokenLoad -= f.prefillLoad
		c.loadChanged(f.route.Prefill)
		f.prefillLoad = 0
	}
	if f.bookedTokens == 0 {
		return
	}
	c.replicas[f.route.Prefill].prefillTokens -= f.bookedTokens
	c.loadChanged(f.route.Prefill)
	f.bookedTokens = 0
	c.retryHeld()
}

// unbook ends all of a flight's bookkeeping (it finished, or left its
// decoder).
func (c *cluster) unbook(f *flight) {
	if f.unbooked {
		return // returned when an instance of it crashed
	}
	if f.route.Decode != router.DecodeLater {
		c.unbookDecode(f)
	}
	c.unbookPrefill(f)
	if f.viaPrefill != 0 {
		p := int(f.viaPrefill - 1)
		c.replicas[p].through--
		c.loadChanged(p)
		f.viaPrefill = 0
	}
	c.retryHeld()
}

func (c *cluster) unbookDecode(f *flight) {
	rp := &c.replicas[decodingInstance(f)]
	c.loadChanged(decodingInstance(f))

	if f.routedHere {
		rp.routed--
		f.routedHere = false
	}
	rp.tokenLoad -= f.decodeLoad
	f.decodeLoad = 0
	if rp.shared == nil {
		rp.blocks -= f.bookedBlocks
	} else {
		rp.shared.remove(f.req.Prefix, c.routing.view.BlockSize)
		rp.blocks = rp.shared.distinct + rp.uniqueBlocks(-f.bookedBlocks)
		if len(f.req.Prefix) > 0 && rp.shared.first(f.req.Prefix) == 0 {
			c.noteSharing(decodingInstance(f), f.req.Prefix, false)
		}
	}
	f.bookedBlocks = 0
}

// countOutputBlocks counts, for a router that counts them
// (router.CountsOutputBlocks), the
// blocks the output of the requests decoding on instance i has filled
// past each prompt's last block, as Dynamo's router adds them while the
// response streams (OutputBlockTracker::observe, from ⌈prompt/B⌉ blocks
// to ⌈(prompt + output so far)/B⌉): those of its running sequences routed
// here to decode. (A preempted one's output is not counted until it runs
// again; Dynamo's router, which sees no preemption, keeps it.) The
// instance must be current.
func (c *cluster) countOutputBlocks(i int, in *engine.Instance) {
	rp := &c.replicas[i]
	bs := c.routing.view.BlockSize
	rp.outputBlocks = 0
	in.RunningGenerated(func(s *engine.Seq, generated int) {
		if f := c.flights.at(s.Ref); f.dseq == s && !f.unbooked && decodingInstance(f) == i {
			p := s.PromptTokens
			rp.outputBlocks += ceilDiv(p+generated, bs) - ceilDiv(p, bs)
		}
	})
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// newBlocks is how many of r's full blocks no request active on instance
// i holds (router.Cluster.NewBlocks).
func (c *cluster) newBlocks(i int, r *router.Request) int {
	bs := c.routing.view.BlockSize
	return r.PromptTokens/bs - c.replicas[i].shared.held(r.Prefix, bs)
}

func decodingInstance(f *flight) int {
	if f.route.Decode >= 0 {
		return f.route.Decode
	}
	return f.route.Prefill
}

// enqueueRouting offers a flight (new, or refused by a decoder) to the
// router behind any it holds.
func (c *cluster) enqueueRouting(ref int32) {
	if p := c.flights.at(ref).phase; p == phaseRejected || p == phaseFailover {
		c.enter(ref, phaseRouting)
	}
	c.hold(ref)
	c.retryHeld()
}

// retryHeld places held flights in order until the router holds one again.
// held[heldFrom:] are waiting, oldest first; the storage is reused once
// they are all placed, and compacted under a long backlog.
func (c *cluster) retryHeld() {
	r := &c.routing
	for r.heldFrom < len(r.held) && !c.placing {
		c.placing = true
		placed := c.placeLive(r.held[r.heldFrom])
		c.placing = false
		if !placed {
			return
		}
		if r.heldFrom++; r.heldFrom == len(r.held) || r.heldFrom >= 1024 && 2*r.heldFrom >= len(r.held) {
			c.compactHeld() // all placed, or a long backlog: reclaim the placed part
		}
	}
}

// placeLive places a held flight, or frees the slot of one whose client
// gave up while it waited (endFlightAt).
func (c *cluster) placeLive(ref int32) bool {
	if c.flights.at(ref).phase == phaseDone {
		c.free(ref)
		return true
	}
	return c.place(ref)
}
