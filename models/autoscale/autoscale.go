// Package autoscale holds the policies that size one pool of a fleet while
// it runs: a metric-threshold scaler in the manner of the Kubernetes
// Horizontal Pod Autoscaler, and an SLA planner in the manner of Dynamo's,
// which predicts the next interval's load and sizes prefill from the TTFT
// target and decode from the TPOT target.
//
// A policy is a pure function of what it is shown: every adjustment
// interval the core builds an Observation of the pool (as stale as the
// scenario's metrics staleness says) and asks the policy for the number of
// instances it wants; the core clamps it to the pool's bounds, requests or
// drains instances, and charges the provisioning and load delays. Policies
// never schedule events, read a clock or draw random numbers.
package autoscale

// Observation is what a policy sees of one pool at one decision.
type Observation struct {
	NowNs      int64 // the decision's simulated time
	IntervalNs int64 // time since the previous decision (the adjustment interval)

	// The pool's instances by state. Requested counts instances asked for
	// that are not ready yet (provisioning or loading weights); Draining
	// counts instances told to stop that still hold work.
	Ready, Requested, Draining int

	// The pool's bounds, which the caller clamps Desired to (MaxInstances
	// 0: unbounded). A policy that remembers the changes it made (the HPA's
	// scale events, which its step limits count) needs them to record the
	// change that will happen, as Kubernetes' HPA clamps to minReplicas and
	// maxReplicas before it stores a scale event.
	MinInstances, MaxInstances int

	// Means over the ready instances, read when the metrics were scraped.
	Waiting float64 // requests waiting per instance
	Running float64 // requests running per instance
	KVUsage float64 // share of KV blocks in use, 0..1

	// Traffic that reached the pool during the last interval.
	Requests      int     // requests routed to the pool
	MeanInput     float64 // their mean prompt tokens
	MeanOutput    float64 // mean output tokens of the requests that finished
	MeanTTFTNs    float64 // mean TTFT of the requests whose first token came in the interval; 0 = none
	MeanTPOTNs    float64 // mean TPOT of the requests that finished in the interval; 0 = none
	FinishedCount int     // requests that finished in the interval
}

// Current is the pool's size as the policy should count it: the instances
// ready and those already requested.
func (o *Observation) Current() int { return o.Ready + o.Requested }

// Policy decides a pool's size. Desired returns the number of instances
// (ready plus requested) the pool should have after this decision; the
// caller clamps it to the pool's min and max. A policy may keep state
// between calls (a stabilisation window, a load predictor); one value
// serves one pool of one run.
type Policy interface {
	Desired(o *Observation) int
}

// Capacity is what the SLA planner knows of one instance of a pool from
// the step-time model, in place of Dynamo's pre-deployment profile.
type Capacity interface {
	// PrefillTokensPerSec is the prompt tokens per second one instance
	// prefills for prompts of isl tokens while meeting ttftNs.
	PrefillTokensPerSec(isl float64, ttftNs int64) float64
	// DecodeTokensPerSec is the output tokens per second one instance
	// generates for requests of isl prompt and osl output tokens while each
	// step stays within tpotNs.
	DecodeTokensPerSec(isl, osl float64, tpotNs int64) float64
}
