package router

import "handoff/models/strictyaml"

// FlowControl is llm-d's flow control in front of its scheduler (the
// endpoint picker's flow controller, llm-d-inference-scheduler's
// pkg/epp/flowcontrol): requests wait in the gateway, in one queue per
// priority band, while the pool is saturated, and are dispatched — the
// highest band first, first come first served within a band — as the
// saturation clears.
//
// The pool's saturation is the utilization detector's
// (pkg/epp/framework/plugins/flowcontrol/saturationdetector/utilization,
// Detector.Saturation): each endpoint scores
// max(waiting / QueueDepthThreshold, KV usage / KVCacheUtilThreshold),
// and the pool is their average over every endpoint (prefill and decode
// alike: the pool is all of them). The shard processor's dispatchCycle
// (pkg/epp/flowcontrol/controller/internal/processor.go) dispatches
// nothing while the saturation is at least the usage limit, 1 by default
// (the static usage-limit policy) — whichever band waits, so that lower
// bands cannot deepen the saturation a higher one waits on — and
// otherwise the head of the highest non-empty band. It runs at each
// arrival and every millisecond; the endpoints' metrics it reads are the
// scheduler's, refreshed every 50 ms: the router's stale view.
type FlowControl struct {
	Enabled bool `yaml:"enabled"`
	// QueueDepthThreshold: the waiting requests at which an endpoint
	// counts as saturated (queueDepthThreshold, default 5).
	QueueDepthThreshold int `yaml:"queue_depth_threshold"`
	// KVCacheUtilThreshold: the KV usage, in (0, 1], at which an endpoint
	// counts as saturated (kvCacheUtilThreshold, default 0.8).
	KVCacheUtilThreshold float64 `yaml:"kv_cache_util_threshold"`
}

// DefaultFlowControl returns llm-d's thresholds, off (flow control is a
// feature the operator turns on).
func DefaultFlowControl() FlowControl {
	return FlowControl{QueueDepthThreshold: 5, KVCacheUtilThreshold: 0.8}
}

// maxQueueDepthThreshold bounds queue_depth_threshold.
const maxQueueDepthThreshold = 1 << 20

// flowControlPollNs is how often llm-d's shard processor tries to
// dispatch without an arrival (its 1 ms dispatch ticker).
const flowControlPollNs = 1e6

// Check validates the section; errors name the field relative to it, as
// llm-d's validateConfig bounds them.
func (f *FlowControl) Check() error {
	switch {
	case f.QueueDepthThreshold < 1 || f.QueueDepthThreshold > maxQueueDepthThreshold:
		return strictyaml.Fieldf("queue_depth_threshold", "must be in [1, %d] requests, got %d",
			maxQueueDepthThreshold, f.QueueDepthThreshold)
	case !(f.KVCacheUtilThreshold > 0 && f.KVCacheUtilThreshold <= 1):
		return strictyaml.Fieldf("kv_cache_util_threshold", "must be in (0, 1], got %g", f.KVCacheUtilThreshold)
	}
	return nil
}

// Saturation is the pool's saturation in c's views: the average over every
// listed instance of max(waiting / QueueDepthThreshold, KV usage /
// KVCacheUtilThreshold); 1 with no instance listed. Cost O(instances).
func (f *FlowControl) Saturation(c *Cluster) float64 {
	n := len(c.Prefill) + len(c.Decode)
	if n == 0 {
		return 1
	}
	sum := 0.0
	for _, vs := range [2][]View{c.Prefill, c.Decode} {
		for i := range vs {
			q := float64(vs[i].Waiting) / float64(f.QueueDepthThreshold)
			sum += max(q, vs[i].KVUsage()/f.KVCacheUtilThreshold)
		}
	}
	return sum / float64(n)
}

// saturated reports whether flow control holds requests now.
func (f *FlowControl) saturated(c *Cluster) bool {
	return f != nil && f.Enabled && f.Saturation(c) >= 1
}

// Queuer is a Router whose held requests (Decision.Held) wait in an order
// of its own: by QueueKey, lower first, those with equal keys in the order
// they were held. A Router that is not a Queuer has them wait in that
// order alone.
type Queuer interface {
	Router
	// QueueKey is r's place in the router's queue; it reads only r's
	// Priority.
	QueueKey(r *Request) int64
	// Queues reports whether the router orders its held requests
	// (a configuration may turn it off).
	Queues() bool
}

// Poller is a Router that may hold requests on the state its views copy
// from the instances, which changes without any routed work finishing: the
// core offers its held requests again every PollNs, and at the next
// refresh of its views, while it holds any.
type Poller interface {
	Router
	// PollNs is the interval between two offers; 0: the router needs
	// none.
	PollNs() int64
}

// QueueKey implements Queuer: flow control's bands, the class's priority
// (lower first, as the engines' priority policy reads it).
func (l *LLMD) QueueKey(r *Request) int64 { return int64(r.Priority) }

// Queues implements Queuer: with flow control on.
func (l *LLMD) Queues() bool { return l.cfg.FlowControl != nil && l.cfg.FlowControl.Enabled }

// PollNs implements Poller: flow control's dispatch ticker, when on.
func (l *LLMD) PollNs() int64 {
	if l.Queues() {
		return flowControlPollNs
	}
	return 0
}
