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
//
// Reading guide: autoscale.go (the contract: Observation, Policy,
// Capacity), hpa.go (the HPA), sla.go and predict.go (the SLA planner and
// its load predictors), errors.go (field-named validation errors).
//
// # The HPA
//
// hpa.go follows kubernetes/kubernetes pkg/controller/podautoscaler
// (replica_calculator.go, calcPlainMetricReplicas; horizontal.go,
// normalizeDesiredReplicasWithBehaviors and the functions it calls) for a
// Pods metric with an AverageValue target. Where handoff differs: the
// decision runs every adjustment interval, not every 15 s sync; instances
// provisioning or loading are the unready pods; the metric has no missing
// pods (every ready instance reports); the defaults are those Kubernetes
// fills into a behavior block, always applied (the controller's legacy
// path without a behavior block, which caps a scale-up at max(2×, 4),
// is not modelled).
//
// # The SLA planner
//
// sla.go follows Dynamo's throughput-based planner (ai-dynamo/dynamo,
// components/src/dynamo/planner: utils/planner_core.py with its
// prefill_planner.py and decode_planner.py in the releases that had
// correction factors; core/load/predictors.py for the predictors). Where
// handoff's differs:
//
//   - Capacity stands in for the pre-deployment profile: throughput per
//     instance comes from the pool's step-time model (scenarios'
//     capacity.go), not from interpolating measured NPZ files, so there is
//     no division by GPUs per engine — Capacity is per instance.
//   - Only the constant and Kalman predictors; ARIMA and Prophet (and the
//     log1p option) are not modelled. Predictors see the request rate, not
//     the count, so intervals of unequal length forecast alike.
//   - Each pool has its own planner; Dynamo's one planner sizes prefill and
//     decode together. min_endpoint and the GPU budget are the pool's
//     min and max count, which the caller clamps to (Dynamo's budget
//     spans both pools and scales them down together).
//   - The decode correction's expected ITL is taken at the observed mean
//     running requests per instance; Dynamo estimates that concurrency by
//     Little's law from the request count and mean duration. handoff
//     compares the mean TPOT where Dynamo reads the mean ITL.
//   - A colocated pool takes the larger of the prefill and decode counts;
//     Dynamo's aggregated mode scales on load metrics and an online
//     regression instead.
//   - An interval without traffic keeps the count and does not feed the
//     length predictors (Dynamo records NaN lengths as 0).
//   - The prefill correction is capped at prefill_correction_max, 1 by
//     default as Dynamo's min(1, factor); newer Dynamo replaced the factors
//     with a regression over forward-pass metrics, which is not modelled.
package autoscale

// Observation is what a policy sees of one pool at one decision.
type Observation struct {
	NowNs      int64 // the decision's simulated time
	IntervalNs int64 // the span the traffic below covers: the adjustment interval (the first, from the run's start)

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

	// The latencies the SLA planner's correction factors divide the
	// observed ones by (Dynamo's interpolate_ttft and interpolate_itl):
	// PrefillNs is the time one idle instance takes to prefill one prompt
	// of isl tokens; DecodeStepNs is one decode step's time with batch
	// requests of isl prompt and osl output tokens running, each at
	// context isl + osl/2.
	PrefillNs(isl float64) int64
	DecodeStepNs(isl, osl, batch float64) int64
}
