package engine

// priority is vLLM's priority scheduling policy (--scheduling-policy
// priority, SchedulingPolicy.PRIORITY). Its waiting queue is a heap
// ordered by (priority, arrival_time, request_id) — a lower value is
// served first (vllm/v1/core/sched/request_queue.py, PriorityRequestQueue;
// vllm/v1/request.py, Request.__lt__) — and a preempted request rejoins it
// at its place in that order, not at the head (prepend_request is
// add_request there). When a running request cannot get its blocks, the
// victim is max(self.running, key=lambda r: (r.priority, r.arrival_time))
// (vllm/v1/core/sched/scheduler.py, schedule), which may be a request
// already scheduled in the step: its tokens go back to the budget.
//
// Here a sequence's arrival is its Enqueue on this instance, its order
// among equal priorities the order of its Enqueue (Seq.order: arrival
// time, then the order of arrival within a nanosecond, as request ids
// break ties). The instance keeps its running set sorted in this order
// (sortRunning, at the start of each pass), so the victim, the greatest,
// is the last — the one the pass preempts — whichever sequences the pass
// has planned before it. One difference from vLLM follows: the running
// pass hands out its token budget in priority order rather than in
// admission order, which shows only when the budget runs out within the
// running set (a long prefill chunk), and then serves the higher class
// first.
type priority struct{}

func (priority) enqueue(q *deque, s *Seq) { insertOrdered(q, s) }
func (priority) requeue(q *deque, s *Seq) { insertOrdered(q, s) }
func (priority) ordersRunning() bool      { return true }

// before reports whether a is served before b: a lower priority value,
// then an earlier arrival.
func before(a, b *Seq) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	return a.order < b.order
}

// insertOrdered puts s in the sorted deque q after every sequence served
// before it. Cost O(n) in the sequences served after it (it scans from
// the back, where most arrivals go).
func insertOrdered(q *deque, s *Seq) {
	q.pushBack(s)
	i := q.len() - 1
	for ; i > 0 && before(s, q.at(i-1)); i-- {
		q.set(i, q.at(i-1))
	}
	q.set(i, s)
}

// sortRunning restores the running set's order after admissions appended
// to it (an insertion sort: those admitted since the last pass move
// forward past the sequences served after them), moving each one's cruise
// state with it. Call it between steps only, when no position is held.
func (in *Instance) sortRunning() {
	for j := 1; j < len(in.running); j++ {
		s := in.running[j]
		if !before(s, in.running[j-1]) {
			continue
		}
		due, phase, trip := in.due[j], in.phase[j], in.trip[j]
		i := j
		for ; i > 0 && before(s, in.running[i-1]); i-- {
			in.running[i], in.due[i], in.phase[i], in.trip[i] = in.running[i-1], in.due[i-1], in.phase[i-1], in.trip[i-1]
		}
		in.running[i], in.due[i], in.phase[i], in.trip[i] = s, due, phase, trip
	}
}
