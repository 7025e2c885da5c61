package engine

import (
	"fmt"
	"strings"
)

// schedPolicy is an engine's scheduling policy, vLLM's
// --scheduling-policy: the order of its waiting queues and which running
// sequence a pass preempts when one cannot get a block. A new policy is a
// file with its implementation and a line in schedPolicies.
type schedPolicy interface {
	// enqueue places s, joining the waiting or the ready queue q, in q.
	enqueue(q *deque, s *Seq)
	// requeue returns s, just preempted, to the waiting queue q.
	requeue(q *deque, s *Seq)
	// ordersRunning reports whether the instance keeps its running set in
	// the policy's order (sortRunning), making its last sequence the one
	// the policy preempts; false: admission order, preempting the last
	// admitted (vLLM's running.pop()).
	ordersRunning() bool
}

// The scheduling policies by name, in the order errors list them.
var schedPolicies = []struct {
	name   string
	policy schedPolicy
}{
	{"fcfs", fcfs{}},
	{"priority", priority{}},
}

// SchedulingPolicies returns the names Config.Scheduling accepts.
func SchedulingPolicies() []string {
	names := make([]string, len(schedPolicies))
	for i, p := range schedPolicies {
		names[i] = p.name
	}
	return names
}

// lookupSched returns the policy named name ("" is fcfs).
func lookupSched(name string) (schedPolicy, error) {
	if name == "" {
		name = "fcfs"
	}
	for _, p := range schedPolicies {
		if p.name == name {
			return p.policy, nil
		}
	}
	return nil, fmt.Errorf("scheduling policy %q is not one of %s", name, strings.Join(SchedulingPolicies(), ", "))
}
