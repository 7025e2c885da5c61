package router

import (
	"handoff/models/strictyaml"
	"handoff/models/units"
)

// Dynamo's session affinity (the frontend's
// --router-session-affinity-ttl-secs, unset by default; lib/llm/src/
// session_affinity, AffinityCoordinator): the first request of a session
// binds the session to the worker it is routed to, and the session's later
// requests go to that worker, without pricing the others, while it is still
// in the leg (a worker that left or failed is chosen anew and bound) —
// transient overload does not break the binding
// (RoutingEligibility::allows_worker_ignoring_overload,
// lib/kv-router/src/scheduling/filter.rs). A binding unused for the TTL
// expires. The prefill router and the decode router keep their own, so a
// disaggregated session keeps its prefiller and its decoder.
//
// Upstream the idle time runs from the end of the session's last request;
// handoff counts it from that request's routing (the router sees no end),
// so a binding whose turns take longer than the TTL to serve lapses a
// little early. The request carries its session (Request.Session), as
// the session id a client sends.

// maxSessionAffinityTTL is Dynamo's bound on the TTL
// (MAX_SESSION_AFFINITY_TTL_SECS: a year).
const maxSessionAffinityTTL = 31_536_000 * units.Duration(1e9)

// checkSession validates SessionAffinityTTL: whole seconds in [1 s, a
// year], as the frontend's flag takes them.
func (c *DynamoConfig) checkSession() error {
	t := c.SessionAffinityTTL
	if t != nil && !(*t >= 1e9 && *t <= maxSessionAffinityTTL) {
		return strictyaml.Fieldf("session_affinity_ttl", "must be in [1s, 31536000s], as Dynamo requires, got %s",
			units.FormatDuration(int64(*t)))
	}
	return nil
}

// binding is one session's worker and when the session last used it.
type binding struct {
	inst   int
	usedNs int64
}

// sessionBindings are one leg's bindings, by session.
type sessionBindings map[int32]binding

// legIndex is 1 for the decode leg, 0 for the prefill (or colocated) one.
func legIndex(decode bool) int {
	if decode {
		return 1
	}
	return 0
}

// pinned returns the view, in whole (c's leg before the busy filter cut
// it), of the worker r's session is bound to on that leg, or nil: no
// affinity, no session, no live binding, or its worker gone.
func (d *Dynamo) pinned(r *Request, whole *Cluster, decode bool) *View {
	ttl := d.cfg.SessionAffinityTTL
	if ttl == nil || !r.InSession() {
		return nil
	}
	b, ok := d.sessions[legIndex(decode)][r.Session]
	if !ok || whole.NowNs-b.usedNs > int64(*ttl) {
		return nil
	}
	vs := whole.leg(decode)
	for i := range vs {
		if vs[i].Index == b.inst {
			return &vs[i]
		}
	}
	return nil
}

// bind binds r's session to worker inst on a leg, used now.
func (d *Dynamo) bind(r *Request, c *Cluster, decode bool, inst int) {
	if d.cfg.SessionAffinityTTL != nil && r.InSession() {
		d.sessions[legIndex(decode)][r.Session] = binding{inst: inst, usedNs: c.NowNs}
	}
}
