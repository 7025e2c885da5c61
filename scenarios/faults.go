package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"handoff/models/units"
	"handoff/scenarios/workload"
	"handoff/sim"
)

// Faults are what goes wrong in a run (see package sim, faults.go): events
// at given times, and rates from which more are drawn with the run's
// seed.
//
//	faults:
//	  events:
//	    - {kind: crash, instance: decode-0, at: 30m}
//	    - {kind: link_degrade, link: prefill-0/egress, at: 10m, duration: 5m, factor: 0.5}
//	    - {kind: link_down, link: decode-1/ingress, at: 12m, duration: 30s}
//	    - {kind: straggler, pool: decode, at: 20m, duration: 2m, factor: 3}
//	  rates: {until: 1h, crash_mtbf: 6h, straggler_mtbf: 2h, straggler_duration: 5m, straggler_factor: 2}
//
// An event names its instance (crash, straggler) by name, or by pool (its
// first instance), and its link (link_down, link_degrade) by the
// topology's name for it. Times are the run's clock (rate_scale speeds
// the arrivals, not them). An event at or after the end of the workload's
// arrivals is an error where that end is known before the run (see
// horizon); a fault after the last request has ended never applies.
type Faults struct {
	Events []FaultEvent `yaml:"events,omitempty"`
	Rates  *FaultRates  `yaml:"rates,omitempty"`
}

// FaultEvent is one scheduled fault.
type FaultEvent struct {
	Kind     string         `yaml:"kind"` // crash | link_down | link_degrade | straggler
	Instance string         `yaml:"instance,omitempty"`
	Pool     string         `yaml:"pool,omitempty"`
	Link     string         `yaml:"link,omitempty"`
	At       units.Duration `yaml:"at"`
	Duration units.Duration `yaml:"duration,omitempty"`
	Factor   float64        `yaml:"factor,omitempty"`
}

// FaultRates draws crashes and stragglers per instance until Until.
type FaultRates struct {
	Until             units.Duration `yaml:"until"`
	CrashMTBF         units.Duration `yaml:"crash_mtbf,omitempty"`
	StragglerMTBF     units.Duration `yaml:"straggler_mtbf,omitempty"`
	StragglerDuration units.Duration `yaml:"straggler_duration,omitempty"`
	StragglerFactor   float64        `yaml:"straggler_factor,omitempty"`
}

var faultKinds = map[string]sim.FaultKind{"crash": sim.FaultCrash, "link_down": sim.FaultLinkDown,
	"link_degrade": sim.FaultLinkDegrade, "straggler": sim.FaultStraggler}

// validateFaults checks what can be checked before the cluster is built;
// buildFaults resolves the names.
func (l *Loaded) validateFaults() error {
	fs := l.Scenario.Faults
	if fs == nil {
		return nil
	}
	for k, e := range fs.Events {
		at := fmt.Sprintf("faults.events[%d].", k)
		kind, ok := faultKinds[e.Kind]
		link := kind == sim.FaultLinkDown || kind == sim.FaultLinkDegrade
		switch {
		case !ok:
			return l.errorf(at+"kind", "unknown kind %q (known: crash, link_down, link_degrade, straggler)", e.Kind)
		case e.At < 0:
			return l.errorf(at+"at", "%v is before the run", e.At)
		case kind != sim.FaultCrash && e.Duration <= 0:
			return l.errorf(at+"duration", "must be positive for a %s", e.Kind)
		case link && e.Link == "":
			return l.errorf(at+"link", "required for a %s", e.Kind)
		case !link && (e.Instance == "") == (e.Pool == ""):
			return l.errorf(at+"instance", "a %s names one of instance or pool", e.Kind)
		case kind == sim.FaultLinkDegrade && !(e.Factor > 0 && e.Factor < 1):
			return l.errorf(at+"factor", "a degraded link keeps a share in (0, 1) of its bandwidth, got %g", e.Factor)
		case kind == sim.FaultStraggler && !(e.Factor > 1):
			return l.errorf(at+"factor", "a straggler's steps take more than 1× as long, got %g", e.Factor)
		}
	}
	if r := fs.Rates; r != nil {
		switch {
		case r.Until <= 0:
			return l.errorf("faults.rates.until", "must be positive, got %v", r.Until)
		case r.CrashMTBF < 0 || r.StragglerMTBF < 0:
			return l.errorf("faults.rates.crash_mtbf", "the mean times between faults must not be negative")
		case r.StragglerMTBF > 0 && r.StragglerDuration <= 0:
			return l.errorf("faults.rates.straggler_duration", "must be positive with a straggler_mtbf")
		case r.StragglerMTBF > 0 && !(r.StragglerFactor > 1):
			return l.errorf("faults.rates.straggler_factor", "must be above 1 with a straggler_mtbf, got %g", r.StragglerFactor)
		}
		for i, p := range l.Pools {
			if p.DP > 1 {
				return l.errorf("faults.rates", "draws faults on every instance, and the data-parallel ranks of pools[%d] "+
					"(%s, dp %d) have none modelled: give that pool dp 1, or schedule the faults as events", i, p.Name, p.DP)
			}
		}
	}
	return nil
}

// buildFaults resolves the faults' instances and links against the built
// cluster.
func (l *Loaded) buildFaults(b *Built, end horizon) error {
	fs := l.Scenario.Faults
	if fs == nil {
		return nil
	}
	cfg := b.Config
	for k, e := range fs.Events {
		at := fmt.Sprintf("faults.events[%d].", k)
		if err := end.check(l, at+"at", e.At); err != nil {
			return err
		}
		f := sim.Fault{Kind: faultKinds[e.Kind], AtNs: int64(e.At), DurationNs: int64(e.Duration), Factor: e.Factor,
			Instance: -1, Link: -1}
		switch {
		case e.Link != "":
			f.Link = linkIndex(cfg, e.Link)
			if f.Link < 0 {
				return l.errorf(at+"link", "no link %q in the topology", e.Link)
			}
		case e.Instance != "":
			if f.Instance = instanceIndex(cfg, e.Instance); f.Instance < 0 {
				return l.errorf(at+"instance", "no instance %q (instances are named <pool>-<k>)", e.Instance)
			}
		default:
			if f.Instance = poolIndex(cfg, e.Pool); f.Instance < 0 {
				return l.errorf(at+"pool", "no pool %q", e.Pool)
			}
		}
		if f.Instance >= 0 && cfg.Instances[f.Instance].DPRanks > 1 {
			return l.errorf(at+"instance", "%s is a data-parallel rank, whose faults are not modelled",
				cfg.Instances[f.Instance].Name)
		}
		cfg.Faults = append(cfg.Faults, f)
	}
	if r := fs.Rates; r != nil {
		cfg.FaultRates = &sim.FaultRates{UntilNs: int64(r.Until), CrashMTBFNs: int64(r.CrashMTBF),
			StragglerMTBFNs: int64(r.StragglerMTBF), StragglerNs: int64(r.StragglerDuration),
			StragglerFactor: r.StragglerFactor}
	}
	return nil
}

// horizon is when the workload's arrivals end, with what says so ("" when
// that is not known before the run).
type horizon struct {
	ns  int64
	why string
}

// check refuses a time of the run (a fault's, a schedule step's) at field
// at or after the end of the arrivals, where that end is known: a fleet
// event there never meets a request arriving, and is most likely a time
// written for another rate_scale. Such times are the run's clock, as
// every time the run reports: rate_scale moves the arrivals, so the end
// they are checked against, not them.
func (h horizon) check(l *Loaded, field string, t units.Duration) error {
	if h.why != "" && int64(t) >= h.ns {
		return l.errorf(field, "%v is outside the run: %s end by %v", t, h.why, units.Duration(h.ns))
	}
	return nil
}

// horizon is when the workload's arrivals end, with what says so ("" when
// it is not known before the run): a synthetic workload's duration, or
// its requests over its rate (their expected span); a shared-prefix
// workload's stages; a ServeGen replay's windows, read from each client's
// trace (the longest client). Each is divided by rate_scale. A trace's
// last arrival would take reading it whole, sessions depend on their
// think times and a closed loop on the service: none is checked.
func (l *Loaded) horizon() horizon {
	w := &l.Workload
	if w.Client.Concurrency > 0 {
		return horizon{}
	}
	var ns float64
	var why string
	switch {
	case w.Synthetic != nil:
		s := w.Synthetic
		ns, why = math.Inf(1), ""
		if s.Duration > 0 {
			ns, why = float64(s.Duration), "workload.synthetic.duration's arrivals"
		}
		if s.Requests > 0 && s.Arrival.Rate > 0 {
			if r := float64(s.Requests) / float64(s.Arrival.Rate) * 1e9; r < ns {
				ns, why = r, "workload.synthetic's requests at its rate"
			}
		}
	case w.SharedPrefix != nil:
		for _, st := range w.SharedPrefix.Stages {
			ns += float64(st.Duration)
		}
		why = "workload.shared_prefix's stages"
	case w.ServeGen != nil:
		ns, why = l.serveGenSpanNs(w.ServeGen), "workload.servegen's windows"
	}
	if why == "" || !(ns > 0) {
		return horizon{}
	}
	if w.RateScale != 1 {
		why += fmt.Sprintf(" at rate_scale %g", w.RateScale)
	}
	return horizon{ns: int64(math.Min(ns/w.RateScale, math.MaxInt64/2)), why: why}
}

// serveGenSpanNs is the longest replay of g's clients: the lengths of the
// windows it replays (all, or those listed), each window lasting to the
// next one's start and the last as long as the one before it (600 s with
// a single window), as the workload package replays them. A file it
// cannot read counts as 0: building the source reports it.
func (l *Loaded) serveGenSpanNs(g *workload.ServeGen) float64 {
	var most float64
	for _, path := range g.Clients() {
		starts := serveGenStarts(l.Resolve(path + "-trace.csv"))
		if len(starts) == 0 {
			continue
		}
		length := map[float64]float64{}
		var span float64
		for k, st := range starts {
			switch {
			case k+1 < len(starts):
				length[st] = starts[k+1] - st
			case k > 0:
				length[st] = st - starts[k-1]
			default:
				length[st] = 600
			}
			span += length[st]
		}
		if len(g.Windows) > 0 {
			span = 0
			for _, w := range g.Windows {
				span += length[float64(w)]
			}
		}
		most = max(most, span*1e9)
	}
	return most
}

// serveGenStarts reads the window_start_s column of a ServeGen trace (nil
// if it cannot: the source reports why). Cost: one pass over a file of a
// few kB.
func serveGenStarts(path string) []float64 {
	data, err := ReadFile(path)
	if err != nil {
		return nil
	}
	var starts []float64
	for line := range strings.Lines(string(data)) {
		field, _, _ := strings.Cut(line, ",")
		v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
		if err != nil {
			return nil
		}
		starts = append(starts, v)
	}
	return starts
}

func linkIndex(cfg *sim.Config, name string) int {
	if cfg.Topology == nil {
		return -1
	}
	for i, n := range cfg.Topology.Names {
		if n == name {
			return i
		}
	}
	return -1
}

func instanceIndex(cfg *sim.Config, name string) int {
	for i := range cfg.Instances {
		if cfg.Instances[i].Name == name {
			return i
		}
	}
	return -1
}

func poolIndex(cfg *sim.Config, pool string) int {
	for i := range cfg.Instances {
		if cfg.Instances[i].Pool == pool {
			return i
		}
	}
	return -1
}

// validateFleet checks the pools' autoscalers and the faults.
func (l *Loaded) validateFleet() error {
	if err := l.validateAutoscale(); err != nil {
		return err
	}
	return l.validateFaults()
}

// buildFleet adds the autoscalers and the faults to the configuration;
// their times must fall before the end of the arrivals.
func (l *Loaded) buildFleet(b *Built) error {
	end := l.horizon()
	if err := l.buildAutoscale(b, end); err != nil {
		return err
	}
	return l.buildFaults(b, end)
}
