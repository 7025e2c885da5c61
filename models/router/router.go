// Package router holds the routing policies: given a request and a view of
// the instances, choose where its prefill runs and, in a disaggregated
// cluster, where it decodes. Routers are deterministic state machines; any
// randomness comes from a *rand.Rand they are given.
package router

import "handoff/models/kv"

// View is what a router sees of one instance. In a stale view the counters
// were copied at the last refresh; Outstanding is always the router's own
// bookkeeping and therefore current.
type View struct {
	Index       int // instance index in the cluster
	Waiting     int // sequences queued for admission
	Running     int // sequences in the running set
	Outstanding int // requests routed here and not yet finished here
	FreeBlocks  int // KV blocks allocatable now
	TotalBlocks int
	BlockSize   int
}

// Request is what a router knows of a request.
type Request struct {
	ID           int64
	PromptTokens int
	OutputTokens int
	Prefix       []kv.Segment
}

// Cluster is the routing view: the instances that can run a prefill
// (prefill or colocated role) and, when disaggregated, those that decode.
type Cluster struct {
	Prefill []View
	Decode  []View // empty when the cluster is colocated
}

// Decision is a placement: instance indexes for each leg. Decode is -1 when
// the prefill instance also decodes (colocated).
type Decision struct {
	Prefill int
	Decode  int
}

// Router places requests.
type Router interface {
	Route(r *Request, c *Cluster) Decision
}

// RouterFunc adapts a function to Router.
type RouterFunc func(r *Request, c *Cluster) Decision

// Route calls f(r, c).
func (f RouterFunc) Route(r *Request, c *Cluster) Decision { return f(r, c) }
