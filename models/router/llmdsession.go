package router

// ScorerSessionAffinity is llm-d's session-affinity-scorer
// (llm-d-inference-scheduler, pkg/epp/framework/plugins/scheduling/scorer/
// sessionaffinity/session_affinity.go, SessionAffinity.Score and
// ResponseBody): a request of a session scores 1 on the instance that
// served the session's last turn and 0 elsewhere; a request of no
// session, or of a session not yet served, scores 0 everywhere.
//
// Upstream the EPP writes the serving pod's name into the response's
// x-session-token header and the client sends it back with the next turn;
// the pod is the request's target, which under P/D is the decoder (the
// primary profile's pick), so a prefiller never matches. handoff keeps the
// same memory in the router, written when the turn is routed: a session's
// next turn is sent only after its last one ended (sim.SessionSource), so
// the turn routed last is the turn that answered last.
const ScorerSessionAffinity = "session-affinity"

// sessionPods remembers, per session, the instance its last turn was
// routed to (the one whose name the client would echo).
type sessionPods map[int32]int

// scores appends the scorer's values for vs.
func (s sessionPods) scores(dst []float64, r *Request, vs []View) []float64 {
	pod, ok := -1, false
	if r.InSession() {
		pod, ok = s[r.Session]
	}
	for i := range vs {
		x := 0.0
		if ok && vs[i].Index == pod {
			x = 1
		}
		dst = append(dst, x)
	}
	return dst
}

// served records that r's turn went to instance inst.
func (s sessionPods) served(r *Request, inst int) {
	if r.InSession() {
		s[r.Session] = inst
	}
}
