package router

import "math/rand/v2"

// PowerOfTwo is Ray Serve's default request router, the one in front of
// Ray Serve LLM's deployments: for each request it draws two candidate
// replicas at random, asks each for its queue length and sends the request
// to the shorter queue (PowerOfTwoChoicesRequestRouter in
// ray/serve/_private/request_router/pow_2_router.py, its queue-length
// probes in request_router.py). A replica's queue length is its ongoing
// requests, which is View.Outstanding: routed there and not finished
// there. A tie goes to the first candidate drawn. The P/D proxy of Ray
// Serve LLM (PDProxyServer) calls the prefill deployment first and the
// decode deployment once the prefill has returned, each through its own
// handle's router: so the decoder is drawn when the prefill is done
// (DecodeRouter).
//
// What it leaves out: the probes answer at once here (Ray's take a round
// trip, and its queue-length cache may answer from a recent probe
// instead), locality (Ray first tries replicas on the caller's node) and
// max_ongoing_requests, whose full replicas refuse and are retried.
type PowerOfTwo struct {
	rng *rand.Rand
}

// NewPowerOfTwo returns the router; its candidates are drawn from rng.
func NewPowerOfTwo(rng *rand.Rand) *PowerOfTwo {
	if rng == nil {
		panic("router: power of two choices needs a random stream")
	}
	return &PowerOfTwo{rng: rng}
}

// Route implements Router.
func (p *PowerOfTwo) Route(_ *Request, c *Cluster) Decision {
	d := Decision{Prefill: p.choose(c.Prefill), Decode: -1}
	if len(c.Decode) > 0 {
		d.Decode = DecodeLater
	}
	return d
}

// RouteDecode implements DecodeRouter.
func (p *PowerOfTwo) RouteDecode(_ *Request, c *Cluster) int { return p.choose(c.Decode) }

// ReadsInstanceState implements InstanceStateReader: it reads only the
// router's bookkeeping.
func (*PowerOfTwo) ReadsInstanceState() bool { return false }

// choose returns the instance index of the shorter queue of two views of
// vs drawn at random, distinct when there are two or more.
func (p *PowerOfTwo) choose(vs []View) int {
	if len(vs) == 1 {
		return vs[0].Index
	}
	i := p.rng.IntN(len(vs))
	j := p.rng.IntN(len(vs) - 1)
	if j >= i {
		j++
	}
	if vs[j].Outstanding < vs[i].Outstanding {
		return vs[j].Index
	}
	return vs[i].Index
}
