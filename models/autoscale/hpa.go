package autoscale

import (
	"errors"
	"fmt"
	"math"

	"handoff/models/units"
)

// The per-instance metrics an HPA may target, as a custom metric of type
// Pods with an AverageValue target would present them.
const (
	MetricWaiting = "waiting"  // requests waiting per ready instance
	MetricRunning = "running"  // requests running per ready instance
	MetricKVUsage = "kv_usage" // share of KV blocks in use, 0..1
)

// The ways an HPA picks among its step limits (autoscaling/v2
// ScalingPolicySelect) and the kinds of step limit (HPAScalingPolicyType).
const (
	SelectMax      = "max"      // the policy allowing the largest change (the default)
	SelectMin      = "min"      // the policy allowing the smallest change
	SelectDisabled = "disabled" // no change in this direction

	StepPods    = "pods"    // at most Value instances per Period
	StepPercent = "percent" // at most Value % of the instances at the period's start per Period
)

// HPA configures a metric-threshold scaler in the manner of the Kubernetes
// Horizontal Pod Autoscaler (autoscaling/v2 with a behavior block). Every
// decision it computes ceil(ready × metric/target), keeps the count when
// the ratio is within Tolerance of 1, stabilises the result over the
// direction's window and caps the change with the direction's step limits.
type HPA struct {
	Metric    string   `yaml:"metric"`    // waiting | running | kv_usage
	Target    float64  `yaml:"target"`    // the metric's per-instance target value
	Tolerance *float64 `yaml:"tolerance"` // no change while |metric/target − 1| ≤ this; default 0.1
	ScaleUp   HPARules `yaml:"scale_up"`
	ScaleDown HPARules `yaml:"scale_down"`
}

// HPARules is one direction's behavior (autoscaling/v2 HPAScalingRules).
type HPARules struct {
	// Stabilization is the window whose recommendations bound a change:
	// scaling down goes no lower than the highest recommendation in it,
	// scaling up no higher than the lowest. Defaults: 0 up, 300 s down.
	Stabilization *units.Duration `yaml:"stabilization"`
	Select        string          `yaml:"select"`   // max | min | disabled; default max
	Policies      []HPAStep       `yaml:"policies"` // step limits; default as Kubernetes
}

// HPAStep is one step limit (autoscaling/v2 HPAScalingPolicy): the change
// over any Period may not exceed Value instances (pods) or Value percent of
// the count at the period's start (percent).
type HPAStep struct {
	Type   string         `yaml:"type"` // pods | percent
	Value  int            `yaml:"value"`
	Period units.Duration `yaml:"period"`
}

// Kubernetes' defaults (pkg/apis/autoscaling/v2/defaults.go,
// SetDefaults_HorizontalPodAutoscalerBehavior; the tolerance is the
// controller's --horizontal-pod-autoscaler-tolerance and the down window
// its --horizontal-pod-autoscaler-downscale-stabilization).
const (
	defaultTolerance        = 0.1
	defaultDownWindowNs     = 300e9
	defaultStepPeriodNs     = 15e9
	defaultScaleUpPods      = 4
	defaultScaleUpPercent   = 100
	defaultScaleDownPercent = 100
)

// Defaults fills what the section left out with Kubernetes' defaults:
// tolerance 0.1; scale up with no window, by the larger of 4 instances and
// 100 % per 15 s; scale down after a 300 s window, by up to 100 % per 15 s.
func (h *HPA) Defaults() {
	if h.Tolerance == nil {
		t := defaultTolerance
		h.Tolerance = &t
	}
	h.ScaleUp.defaults(0, []HPAStep{
		{Type: StepPods, Value: defaultScaleUpPods, Period: defaultStepPeriodNs},
		{Type: StepPercent, Value: defaultScaleUpPercent, Period: defaultStepPeriodNs}})
	h.ScaleDown.defaults(defaultDownWindowNs, []HPAStep{
		{Type: StepPercent, Value: defaultScaleDownPercent, Period: defaultStepPeriodNs}})
}

func (r *HPARules) defaults(windowNs units.Duration, steps []HPAStep) {
	if r.Stabilization == nil {
		r.Stabilization = &windowNs
	}
	if r.Select == "" {
		r.Select = SelectMax
	}
	if r.Policies == nil {
		r.Policies = steps
	}
}

// Validate checks h after Defaults; errors name fields relative to the
// section ("scale_down.policies[0].period: ...").
func (h *HPA) Validate() error {
	var errs []error
	switch h.Metric {
	case MetricWaiting, MetricRunning, MetricKVUsage:
	default:
		errs = append(errs, fieldErr("metric", "%q is not one of waiting, running, kv_usage", h.Metric))
	}
	if !(h.Target > 0) || math.IsInf(h.Target, 0) {
		errs = append(errs, fieldErr("target", "must be > 0 and finite, got %g", h.Target))
	} else if h.Metric == MetricKVUsage && h.Target > 1 {
		errs = append(errs, fieldErr("target", "kv_usage is a share of the KV blocks: must be ≤ 1, got %g", h.Target))
	}
	if t := h.Tolerance; t == nil || !(*t >= 0 && *t < 1) {
		errs = append(errs, fieldErr("tolerance", "must be in [0, 1)"))
	}
	errs = append(errs, prefixed("scale_up", h.ScaleUp.validate()))
	errs = append(errs, prefixed("scale_down", h.ScaleDown.validate()))
	return errors.Join(errs...)
}

func (r *HPARules) validate() error {
	var errs []error
	if r.Stabilization == nil || *r.Stabilization < 0 || *r.Stabilization > 3600e9 {
		errs = append(errs, fieldErr("stabilization", "must be in [0, 1h] (Kubernetes' limit)"))
	}
	switch r.Select {
	case SelectMax, SelectMin, SelectDisabled:
	default:
		errs = append(errs, fieldErr("select", "%q is not one of max, min, disabled", r.Select))
	}
	if len(r.Policies) == 0 && r.Select != SelectDisabled {
		errs = append(errs, fieldErr("policies", "needs at least one step limit (or select: disabled)"))
	}
	for i, p := range r.Policies {
		errs = append(errs, prefixed(fmt.Sprintf("policies[%d]", i), p.validate()))
	}
	return errors.Join(errs...)
}

func (p HPAStep) validate() error {
	var errs []error
	if p.Type != StepPods && p.Type != StepPercent {
		errs = append(errs, fieldErr("type", "%q is not one of pods, percent", p.Type))
	}
	if p.Value <= 0 {
		errs = append(errs, fieldErr("value", "must be > 0, got %d", p.Value))
	}
	if p.Period <= 0 || p.Period > 1800e9 {
		errs = append(errs, fieldErr("period", "must be in (0, 30min] (Kubernetes' limit)"))
	}
	return errors.Join(errs...)
}

// NewHPA returns the scaler h describes; h must have passed Defaults and
// Validate (NewHPA panics otherwise: a programmer error).
func NewHPA(h HPA) Policy {
	h.Defaults()
	if err := h.Validate(); err != nil {
		panic("autoscale: invalid HPA: " + err.Error())
	}
	return &hpa{cfg: h, tolerance: *h.Tolerance,
		upWindowNs: int64(*h.ScaleUp.Stabilization), downWindowNs: int64(*h.ScaleDown.Stabilization)}
}

// hpa is one pool's scaler: the recommendations of its stabilisation
// windows that may still be a window's lowest or highest, and the scale
// events its step limits count. Both are pruned to their window or
// period, so memory is bounded by that span over the adjustment interval.
type hpa struct {
	cfg                      HPA
	tolerance                float64
	upWindowNs, downWindowNs int64
	// lows and highs are the scale-up and scale-down windows'
	// recommendations, oldest first, keeping only those no later one is
	// as low (lows) or as high (highs): each window's lowest or highest is
	// its first, so a decision costs O(1) amortized, not a scan of the
	// window — 300 s of decisions a millisecond apart would be 300,000.
	lows, highs []stamped
	ups, downs  []stamped // scale events: instances added or removed
}

// stamped is a count at a time: a recommendation or a scale event.
type stamped struct {
	atNs int64
	n    int
}

// Desired follows the HPA controller's reconcileAutoscaler
// (pkg/controller/podautoscaler/horizontal.go): bring a count outside the
// pool's bounds back inside them; otherwise compute the metric's
// recommendation, stabilise it and limit its rate
// (normalizeDesiredReplicasWithBehaviors), and record the change as a
// scale event (storeScaleEvent).
func (h *hpa) Desired(o *Observation) int {
	cur := o.Current()
	if cur == 0 {
		// A target scaled to zero has autoscaling disabled
		// (reconcileAutoscaler: "scaling is disabled since the replica
		// count of the target is zero").
		return 0
	}
	var want int
	switch {
	case o.MaxInstances > 0 && cur > o.MaxInstances:
		want = o.MaxInstances
	case cur < o.MinInstances:
		want = o.MinInstances
	default:
		rec := h.recommend(o)
		want = h.rateLimit(o, cur, h.stabilize(o.NowNs, cur, rec))
	}
	if want != cur {
		h.record(o.NowNs, cur, want)
	}
	return want
}

// metric is the per-instance value h targets.
func (h *hpa) metric(o *Observation) float64 {
	switch h.cfg.Metric {
	case MetricRunning:
		return o.Running
	case MetricKVUsage:
		return o.KVUsage
	}
	return o.Waiting
}

// recommend is the metric's desired count, after
// pkg/controller/podautoscaler/replica_calculator.go, calcPlainMetricReplicas:
// ready instances report the metric; instances still provisioning or
// loading are unready and, on a scale-up, count as reporting zero (so a
// scale-up already under way is not repeated); within tolerance, or when
// counting the unready ones would reverse the direction, the count stays.
// Draining instances are deleting pods, which the calculator ignores. With
// no ready instance there is no metric and the count stays, as the
// controller keeps the scale when it cannot read the metric.
func (h *hpa) recommend(o *Observation) int {
	cur := o.Current()
	if o.Ready == 0 {
		return cur
	}
	ratio := h.metric(o) / h.cfg.Target
	if o.Requested == 0 || ratio <= 1 {
		if math.Abs(1-ratio) <= h.tolerance {
			return cur
		}
		return ceilCount(ratio * float64(o.Ready))
	}
	counted := o.Ready + o.Requested
	scaled := ratio * float64(o.Ready) / float64(counted)
	if math.Abs(1-scaled) <= h.tolerance || scaled < 1 {
		return cur
	}
	return max(ceilCount(scaled*float64(counted)), cur)
}

// ceilCount is ⌈x⌉ as a count, saturating far beyond any pool.
func ceilCount(x float64) int {
	if x >= 1<<30 {
		return 1 << 30
	}
	return int(math.Ceil(x))
}

// stabilize follows horizontal.go, stabilizeRecommendationWithBehaviors:
// the count moves towards rec no further than the lowest recommendation of
// the scale-up window (when rising) and the highest of the scale-down
// window (when falling), rec included; rec is then recorded.
func (h *hpa) stabilize(nowNs int64, cur, rec int) int {
	h.lows, h.highs = expire(h.lows, nowNs-h.upWindowNs), expire(h.highs, nowNs-h.downWindowNs)
	up, down := rec, rec
	if len(h.lows) > 0 {
		up = min(up, h.lows[0].n)
	}
	if len(h.highs) > 0 {
		down = max(down, h.highs[0].n)
	}
	r := stamped{nowNs, rec}
	h.lows = append(dropWhile(h.lows, func(o int) bool { return o >= rec }), r)
	h.highs = append(dropWhile(h.highs, func(o int) bool { return o <= rec }), r)
	return min(max(cur, up), down)
}

// expire drops the oldest entries, those at or before cutoffNs, without
// moving the rest: append copies them when it next grows the slice.
func expire(xs []stamped, cutoffNs int64) []stamped {
	i := 0
	for i < len(xs) && xs[i].atNs <= cutoffNs {
		i++
	}
	return xs[i:]
}

// dropWhile drops the newest entries whose count beaten reports true.
func dropWhile(xs []stamped, beaten func(n int) bool) []stamped {
	for len(xs) > 0 && beaten(xs[len(xs)-1].n) {
		xs = xs[:len(xs)-1]
	}
	return xs
}

// prune drops the entries at or before cutoffNs (they are in time order).
func prune(xs []stamped, cutoffNs int64) []stamped {
	i := 0
	for i < len(xs) && xs[i].atNs <= cutoffNs {
		i++
	}
	if i == 0 {
		return xs
	}
	return append(xs[:0], xs[i:]...)
}

// rateLimit follows horizontal.go, convertDesiredReplicasWithBehaviorRate:
// a rise is capped by the scale-up limit and the pool's max, a fall by the
// scale-down limit and the pool's min.
func (h *hpa) rateLimit(o *Observation, cur, want int) int {
	switch {
	case want > cur:
		limit := max(h.upLimit(o.NowNs, cur), cur)
		if o.MaxInstances > 0 {
			limit = min(limit, o.MaxInstances)
		}
		return min(want, limit)
	case want < cur:
		limit := min(h.downLimit(o.NowNs, cur), cur)
		return max(want, limit, o.MinInstances)
	}
	return want
}

// upLimit follows horizontal.go, calculateScaleUpLimitWithScalingRules:
// each policy allows its Value (instances, or percent rounded up) above
// the count at its period's start — the count now less the instances added
// within the period plus those removed — and the select rule picks among
// them.
func (h *hpa) upLimit(nowNs int64, cur int) int {
	r := &h.cfg.ScaleUp
	if r.Select == SelectDisabled {
		return cur
	}
	limit := math.MinInt
	if r.Select == SelectMin {
		limit = math.MaxInt
	}
	for _, p := range r.Policies {
		start := cur - changeSince(h.ups, nowNs-int64(p.Period)) + changeSince(h.downs, nowNs-int64(p.Period))
		n := start + p.Value
		if p.Type == StepPercent {
			n = int(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		limit = pick(r.Select == SelectMin, limit, n, false)
	}
	return limit
}

// downLimit follows horizontal.go, calculateScaleDownLimitWithBehaviors:
// each policy allows its Value (instances, or percent rounded down) below
// the count at its period's start; under select max the lowest floor wins.
func (h *hpa) downLimit(nowNs int64, cur int) int {
	r := &h.cfg.ScaleDown
	if r.Select == SelectDisabled {
		return cur
	}
	limit := math.MaxInt
	if r.Select == SelectMin {
		limit = math.MinInt
	}
	for _, p := range r.Policies {
		start := cur - changeSince(h.ups, nowNs-int64(p.Period)) + changeSince(h.downs, nowNs-int64(p.Period))
		n := start - p.Value
		if p.Type == StepPercent {
			n = int(float64(start) * (1 - float64(p.Value)/100))
		}
		limit = pick(r.Select == SelectMin, limit, n, true)
	}
	return limit
}

// pick combines a policy's proposal n into limit: the largest change (the
// max rule) or the smallest (the min rule); down reverses which bound that
// is.
func pick(minRule bool, limit, n int, down bool) int {
	if minRule != down {
		return min(limit, n)
	}
	return max(limit, n)
}

// changeSince sums the events after cutoffNs (getReplicasChangePerPeriod).
func changeSince(events []stamped, cutoffNs int64) int {
	n := 0
	for _, e := range events {
		if e.atNs > cutoffNs {
			n += e.n
		}
	}
	return n
}

// record stores a scale event (storeScaleEvent), dropping the events no
// policy's period still counts (both directions' limits count both kinds).
func (h *hpa) record(nowNs int64, from, to int) {
	cutoff := nowNs - max(longestPeriod(h.cfg.ScaleUp.Policies), longestPeriod(h.cfg.ScaleDown.Policies))
	if to > from {
		h.ups = append(prune(h.ups, cutoff), stamped{nowNs, to - from})
		return
	}
	h.downs = append(prune(h.downs, cutoff), stamped{nowNs, from - to})
}

// longestPeriod is the longest period of ps (getLongestPolicyPeriod).
func longestPeriod(ps []HPAStep) int64 {
	var most int64
	for _, p := range ps {
		most = max(most, int64(p.Period))
	}
	return most
}
