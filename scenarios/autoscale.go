package scenarios

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"handoff/models/autoscale"
	"handoff/models/units"
	"handoff/results"
	"handoff/sim"
)

// Autoscale is a pool's autoscaler: its policy and the bounds and delays
// of the instances it asks for. The pool's count is its size at the
// start; the run builds max instances, the rest off until requested.
//
//	autoscale: {policy: schedule, min: 1, max: 4, interval: 30s, staleness: 15s,
//	            provisioning: 120s, load_bandwidth: 2GB/s,
//	            schedule: [{at: 10m, count: 3}, {at: 40m, count: 1}]}
//
// A requested instance is ready after provisioning (node acquisition)
// plus its load time: the served model's weight bytes (one copy per
// instance) over load_bandwidth, the rate its node reads them from
// storage or the network (0: loaded at once). It is billed from the
// request. Policies:
//
//   - fixed: the pool keeps its count; an instance that crashes is
//     replaced at once, ready after provisioning and load.
//   - schedule: the pool has schedule[k].count instances from
//     schedule[k].at on (count before the first step) — a what-if of a
//     planned scale-up, or the sizes another autoscaler chose, replayed.
//     The times are the run's clock, as a fault's (rate_scale speeds the
//     arrivals, not them), and each must fall before the end of the
//     arrivals where that is known before the run, as a fault's must.
//   - hpa: the Kubernetes Horizontal Pod Autoscaler on a per-instance
//     metric (section hpa: autoscale.HPA; metric and target required).
//   - sla: Dynamo's SLA planner, sizing the pool for the predicted load
//     at the scenario's TTFT and TPOT targets from what the pool's
//     step-time model says one instance sustains (section sla:
//     autoscale.SLA, every field defaulted).
//
// A section read by another policy than the one named is an error. The
// metric-driven policies look like
//
//	autoscale: {policy: hpa, min: 1, max: 8, hpa: {metric: running, target: 32}}
//	autoscale: {policy: sla, min: 1, max: 8, interval: 60s, sla: {predictor: kalman}}
type Autoscale struct {
	Policy        string          `yaml:"policy"`
	Min           int             `yaml:"min"`
	Max           int             `yaml:"max"`
	Interval      units.Duration  `yaml:"interval,omitempty"`     // between decisions; default 30s
	Staleness     units.Duration  `yaml:"staleness,omitempty"`    // how old the metrics a decision sees are
	Provisioning  units.Duration  `yaml:"provisioning,omitempty"` // request → node ready
	LoadBandwidth units.Bandwidth `yaml:"load_bandwidth,omitempty"`
	Schedule      []ScheduleStep  `yaml:"schedule,omitempty"` // policy schedule
	HPA           *autoscale.HPA  `yaml:"hpa,omitempty"`      // policy hpa
	SLA           *autoscale.SLA  `yaml:"sla,omitempty"`      // policy sla
}

// ScheduleStep is one size of a scheduled pool, from At on.
type ScheduleStep struct {
	At    units.Duration `yaml:"at"`
	Count int            `yaml:"count"`
}

// defaultScaleInterval is an autoscaler's decision interval unless set:
// Dynamo's planner adjusts every adjustment_interval (default 180 s), the
// Kubernetes HPA syncs every 15 s; 30 s sits between.
const defaultScaleInterval = 30 * units.Duration(1e9)

// poolEnv is what a policy may need of its pool, once the pool is built.
type poolEnv struct {
	initial        int    // the pool's count at the start
	role           string // prefill | decode | colocated
	capa           autoscale.Capacity
	ttftNs, tpotNs int64 // the scenario's SLO targets
}

// autoscalePolicy is one policy: the section of Autoscale it reads ("" for
// none) and its builder (a nil Policy: fixed).
type autoscalePolicy struct {
	section string
	build   func(a *Autoscale, env *poolEnv) (autoscale.Policy, error)
}

// autoscalePolicies is every policy a pool may name; the known names and
// the sections are derived from it.
var autoscalePolicies = map[string]autoscalePolicy{
	"fixed":    {build: func(*Autoscale, *poolEnv) (autoscale.Policy, error) { return nil, nil }},
	"schedule": {section: "schedule", build: newScheduled},
	"hpa": {section: "hpa", build: func(a *Autoscale, _ *poolEnv) (autoscale.Policy, error) {
		return autoscale.NewHPA(*a.HPA), nil
	}},
	"sla": {section: "sla", build: func(a *Autoscale, env *poolEnv) (autoscale.Policy, error) {
		return autoscale.NewSLA(*a.SLA, env.role, env.capa, env.ttftNs, env.tpotNs)
	}},
}

// sections reports which policy sections a names.
func (a *Autoscale) sections() map[string]bool {
	return map[string]bool{"schedule": len(a.Schedule) > 0, "hpa": a.HPA != nil, "sla": a.SLA != nil}
}

// autoscaleDefaults fills the policy's section: an sla section is created
// when left out (every field has a default), an hpa section present is
// filled (metric and target have none).
func autoscaleDefaults(a *Autoscale) {
	if a.Policy == "sla" && a.SLA == nil {
		a.SLA = &autoscale.SLA{}
	}
	if a.SLA != nil {
		a.SLA.Defaults()
	}
	if a.HPA != nil {
		a.HPA.Defaults()
	}
}

func autoscaleNames() []string {
	names := make([]string, 0, len(autoscalePolicies))
	for n := range autoscalePolicies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// instances is how many data-parallel groups (instances when dp is 1) the
// run builds for the pool: its max when it autoscales.
func (p *Pool) instances() int {
	if p.Autoscale != nil {
		return p.Autoscale.Max
	}
	return p.Count
}

// built is how many instances the run builds for the pool: each of its
// groups is dp ranks, and each rank is an instance of its own.
func (p *Pool) built() int { return p.instances() * p.DP }

// validateAutoscale checks every pool's autoscaler, and that the
// instances built stay within the limit.
func (l *Loaded) validateAutoscale() error {
	for i := range l.Pools {
		p := &l.Pools[i]
		if a := p.Autoscale; a != nil {
			if err := l.checkAutoscale(fmt.Sprintf("pools[%d].autoscale.", i), p, a); err != nil {
				return err
			}
		}
	}
	return l.validateInstanceLimit()
}

// validateInstanceLimit checks that the instances the pools build — count
// × dp each, an autoscaled pool at its max — stay within maxInstances.
func (l *Loaded) validateInstanceLimit() error {
	instances := 0
	for i := range l.Pools {
		p := &l.Pools[i]
		if n := p.built(); n > maxInstances-instances {
			at := fmt.Sprintf("pools[%d].count", i)
			if p.Autoscale != nil {
				at = fmt.Sprintf("pools[%d].autoscale.max", i)
			}
			return l.errorf(at, "the pools build more than %d instances (count × dp each, an autoscaled pool at its max; "+
				"%d before this one, %d in it)", maxInstances, instances, n)
		}
		instances += p.built()
	}
	return nil
}

func (l *Loaded) checkAutoscale(at string, p *Pool, a *Autoscale) error {
	switch {
	case autoscalePolicies[a.Policy].build == nil:
		return l.errorf(at+"policy", "unknown policy %q (known: %s)", a.Policy, strings.Join(autoscaleNames(), ", "))
	case a.Min < 1:
		return l.errorf(at+"min", "must be at least 1 (a pool scaled to zero has nobody to route to), got %d", a.Min)
	case a.Max < a.Min:
		return l.errorf(at+"max", "must not be below min %d, got %d", a.Min, a.Max)
	case p.Count < a.Min || p.Count > a.Max:
		return l.errorf(at+"min", "the pool's count %d must be within [min %d, max %d]", p.Count, a.Min, a.Max)
	case p.DP > 1:
		return l.errorf(at+"policy", "a pool with data-parallel ranks (dp %d) does not autoscale here", p.DP)
	case a.Interval < 0 || a.Staleness < 0 || a.Provisioning < 0:
		return l.errorf(at+"interval", "interval, staleness and provisioning must not be negative")
	case a.LoadBandwidth < 0:
		return l.errorf(at+"load_bandwidth", "must not be negative, got %v", a.LoadBandwidth)
	}
	if err := l.checkSections(at, a); err != nil {
		return err
	}
	for k, s := range a.Schedule {
		sat := fmt.Sprintf("%sschedule[%d]", at, k)
		switch {
		case s.At < 0:
			return l.errorf(sat+".at", "must not be negative, got %v", s.At)
		case k > 0 && s.At <= a.Schedule[k-1].At:
			return l.errorf(sat+".at", "must come after the step before (%v)", a.Schedule[k-1].At)
		case s.Count < a.Min || s.Count > a.Max:
			return l.errorf(sat+".count", "must be within [min %d, max %d], got %d", a.Min, a.Max, s.Count)
		}
	}
	return nil
}

// checkSections refuses a section another policy reads, requires the hpa
// section of policy hpa and validates the policy's section.
func (l *Loaded) checkSections(at string, a *Autoscale) error {
	own := autoscalePolicies[a.Policy].section
	for _, name := range []string{"schedule", "hpa", "sla"} {
		if a.sections()[name] && name != own {
			return l.errorf(at+name, "only policy %s reads a %s section (the policy is %s)", name, name, a.Policy)
		}
	}
	switch {
	case a.Policy == "hpa" && a.HPA == nil:
		return l.errorf(at+"hpa", "required with policy hpa: the metric and its per-instance target "+
			"(e.g. hpa: {metric: running, target: 32})")
	case a.HPA != nil:
		return l.locate(at+"hpa", a.HPA.Validate())
	case a.SLA != nil:
		return l.locate(at+"sla", a.SLA.Validate())
	}
	return nil
}

// buildAutoscale adds the pools' scaling to the configuration. A
// schedule's steps are times of the run, checked against its end as a
// fault's are.
func (l *Loaded) buildAutoscale(b *Built, end horizon) error {
	for i := range l.Pools {
		p := &l.Pools[i]
		a := p.Autoscale
		if a == nil {
			continue
		}
		for k, st := range a.Schedule {
			if err := end.check(l, fmt.Sprintf("pools[%d].autoscale.schedule[%d].at", i, k), st.At); err != nil {
				return err
			}
		}
		policy, err := autoscalePolicies[a.Policy].build(a, l.poolEnv(b, p))
		if err != nil {
			return l.locate(fmt.Sprintf("pools[%d].autoscale.%s", i, a.Policy), err)
		}
		s := sim.PoolScaling{Pool: p.Name, Initial: p.Count, Min: a.Min, Max: a.Max,
			IntervalNs: int64(a.Interval), StalenessNs: int64(a.Staleness), ProvisionNs: int64(a.Provisioning),
			Policy: policy}
		if s.IntervalNs == 0 {
			s.IntervalNs = int64(defaultScaleInterval)
		}
		if a.LoadBandwidth > 0 {
			s.LoadNs = int64(b.Model.WeightBytesTotal()/float64(a.LoadBandwidth)*1e9 + 0.5)
		}
		b.Config.Scaling = append(b.Config.Scaling, s)
	}
	return nil
}

// poolEnv describes pool p of the built cluster to its policy: the
// capacity is that of its first instance's step timer and engine (every
// instance of a pool has the same).
func (l *Loaded) poolEnv(b *Built, p *Pool) *poolEnv {
	env := &poolEnv{initial: p.Count, role: p.Role, ttftNs: int64(l.SLO.TTFT), tpotNs: int64(l.SLO.TPOT)}
	if k := poolIndex(b.Config, p.Name); k >= 0 {
		in := &b.Config.Instances[k]
		env.capa = newPoolCapacity(in.Timer, in.Engine)
	}
	return env
}

// scheduled is the schedule policy: a pool size per time.
type scheduled struct {
	atNs   []int64
	counts []int
	start  int
}

func newScheduled(a *Autoscale, env *poolEnv) (autoscale.Policy, error) {
	s := &scheduled{start: env.initial}
	for _, st := range a.Schedule {
		s.atNs, s.counts = append(s.atNs, int64(st.At)), append(s.counts, st.Count)
	}
	return s, nil
}

// Desired is the count of the last step at or before the decision.
func (s *scheduled) Desired(o *autoscale.Observation) int {
	k, _ := slices.BinarySearch(s.atNs, o.NowNs+1)
	if k == 0 {
		return s.start
	}
	return s.counts[k-1]
}

// FleetInfo is what the summary needs of a run whose fleet changed, with
// each instance's devices priced at its pool's accelerator's
// cost_per_hour; nil for a fixed fleet.
func FleetInfo(l *Loaded, b *Built, res *sim.Result) *results.FleetInfo {
	if res.Fleet == nil {
		return nil
	}
	perGPU := map[string]float64{}
	for k, p := range l.Pools {
		if n := p.Count * b.PoolDevices[k]; n > 0 {
			perGPU[p.Name] = b.PoolCostPerHour[k] / float64(n)
		}
	}
	f := &results.FleetInfo{ScaleUpsNs: res.ScaleUpsNs}
	for _, p := range res.Fleet {
		pc := results.PoolCounts{Pool: p.Pool}
		for _, pt := range p.Points {
			pc.Points = append(pc.Points, results.CountPoint{AtNs: pt.AtNs, Ready: pt.Ready, Requested: pt.Requested,
				Draining: pt.Draining})
		}
		f.Pools = append(f.Pools, pc)
	}
	for _, in := range res.Instances {
		f.Billed = append(f.Billed, results.BilledInstance{Pool: in.Pool, GPUs: in.GPUs, BilledNs: in.BilledNs,
			CostPerGPUHour: perGPU[in.Pool], Crashes: in.Crashes, FailedOver: in.FailedOver})
	}
	return f
}
