package capacity

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"handoff/hardware"
	"handoff/models/strictyaml"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/search"
)

// Planner runs the fleets a plan search asks for and remembers them.
type Planner struct {
	opts      *PlanOptions
	name      string       // the scenario's
	file      string       // the scenario file
	seed      uint64       // the scenario's, after --seed
	plan      *search.Plan // the scenario's plan block; nil = none
	space     search.Space
	target    float64 // attainment
	baseRPS   float64 // the workload's own offered rate, req/s
	rateScale float64 // workload.rate_scale that offers the target rate
	device    string  // what the devices of every fleet priced are called (hardware.JoinNouns)
	notes     []string
	store     *probeStore                 // where finished fleets are saved
	progress  func(runs int, text string) // nil: none
	runs      map[string]int              // Fleet.Key → index in ran
	ran       []planRun                   // in the order run
	choice    search.Choice
	searchErr error // search.ErrRunBudget, or nil
}

// planRun is one fleet the search ran.
type planRun struct {
	fleet       search.Fleet
	costPerHour float64
	Probe
}

// newPlanner resolves the search space with its prices and the rate scale
// that offers the target rate.
func newPlanner(l *scenarios.Loaded, opts *PlanOptions) (*Planner, error) {
	p := &Planner{opts: opts, progress: opts.Progress, name: l.Name, file: l.File, seed: l.Seed, plan: l.Plan, target: opts.Target, runs: map[string]int{}}
	if p.target == 0 {
		p.target = l.SLO.Attainment
	}
	var err error
	if p.space, p.notes, err = planSpace(l, opts); err != nil {
		return nil, err
	}
	if err := p.price(); err != nil {
		return nil, err
	}
	if p.store, err = newProbeStore(opts.Dir, l, opts.Warn); err != nil {
		return nil, err
	}
	base, err := baseRate(l)
	if err != nil {
		return nil, err
	}
	p.baseRPS = base
	p.rateScale = l.Workload.RateScale * opts.TargetRate / base
	if !(p.rateScale >= minRateScale && p.rateScale <= maxRateScale) {
		return nil, fmt.Errorf("--target-rate %g req/s is %.3g× the workload's %.4g req/s (at rate_scale %g): "+
			"the rate scale must stay in [%g, %g]", opts.TargetRate, opts.TargetRate/base, base,
			l.Workload.RateScale, minRateScale, maxRateScale)
	}
	return p, nil
}

// price sets each variant's per-instance cost by building the scenario
// with that variant in its pool at the least count. A variant that cannot
// be built for a reason of its own pool (the model does not fit at that
// TP, say) is dropped with a note; an unknown accelerator or any other
// error ends the plan.
func (p *Planner) price() error {
	for i := range p.space.Pools {
		ps := &p.space.Pools[i]
		kept := ps.Variants[:0]
		var firstErr error
		for _, v := range ps.Variants {
			cost, devices, err := p.variantCost(i, v)
			switch {
			case err == nil:
				v.CostPerHour, v.Devices = cost, devices
				kept = append(kept, v)
			case !ownPoolError(err, i):
				return p.variantError(ps.Name, v, err)
			default:
				if firstErr == nil {
					firstErr = err
				}
				p.notes = append(p.notes, fmt.Sprintf("skipping pool %s on %s at tp %d: %v", ps.Name, v.Hardware, v.TP, err))
			}
		}
		if ps.Variants = kept; len(kept) == 0 {
			return fmt.Errorf("plan: no hardware and TP choice of pool %s can be built: %w", ps.Name, firstErr)
		}
	}
	return nil
}

// variantError reports a variant that cannot be built for a reason the
// plan block must answer for: an unknown accelerator it lists is placed at
// its line; anything else names the variant.
func (p *Planner) variantError(pool string, v search.Variant, err error) error {
	var fe *strictyaml.FieldError
	if p.plan != nil && len(p.plan.Pools[pool].Hardware) > 0 && errors.As(err, &fe) && strings.HasSuffix(fe.Field, ".hardware") {
		msg, _, _ := strings.Cut(fe.Msg, " (from --set ")
		return locateInFile(p.file, strictyaml.Fieldf("plan.pools."+pool+".hardware", "%s", msg))
	}
	return fmt.Errorf("plan: pool %s on %s at tp %d: %w", pool, v.Hardware, v.TP, err)
}

// variantCost returns one instance's price of pool i on variant v, USD per
// hour, and the devices it occupies; it adds the fleet's kind of device to
// what the plan's devices are called.
func (p *Planner) variantCost(i int, v search.Variant) (float64, int, error) {
	ps := p.space.Pools[i]
	l, err := p.load(poolSets(ps.Name, v, ps.MinCount))
	if err != nil {
		return 0, 0, err
	}
	b, err := l.Build()
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	p.device = hardware.JoinNouns(p.device, b.Device)
	return b.PoolCostPerHour[i] / float64(ps.MinCount), b.PoolDevices[i], nil
}

// ownPoolError reports whether err is a field error of pool i other than
// its hardware name: a choice that does not work, not a typo.
func ownPoolError(err error, i int) bool {
	var fe *strictyaml.FieldError
	at := "pools[" + strconv.Itoa(i) + "]"
	return errors.As(err, &fe) && strings.HasPrefix(fe.Field, at+".") && !strings.HasPrefix(fe.Field, at+".hardware")
}

// poolSets returns the overrides that put count instances of variant v in a pool.
func poolSets(pool string, v search.Variant, count int) []string {
	at := "pools." + pool + "."
	return []string{at + "count=" + strconv.Itoa(count), at + "hardware=" + v.Hardware, at + "tp=" + strconv.Itoa(v.TP),
		at + "pp=" + strconv.Itoa(max(v.PP, 1))}
}

// load loads the scenario with the command's overrides, then extra.
func (p *Planner) load(extra []string) (*scenarios.Loaded, error) {
	sets := append(append([]string(nil), p.opts.Sets...), extra...)
	return experiment.Load(p.opts.Scenario, sets, p.opts.Seed)
}

// evaluate runs a fleet at the target rate and reports whether it met the
// attainment target. A fleet already run is not run again. A panic
// becomes an error that says how to replay the fleet's run.
func (p *Planner) evaluate(f search.Fleet) (met bool, err error) {
	if i, ok := p.runs[f.Key()]; ok {
		return p.ran[i].MeetsStrict(p.target), nil
	}
	sets := []string{"workload.rate_scale=" + strconv.FormatFloat(p.rateScale, 'g', -1, 64)}
	for i, ps := range p.space.Pools {
		sets = append(sets, poolSets(ps.Name, ps.Variants[f.Variant[i]], f.Count[i])...)
	}
	rp := experiment.Replay{File: p.file, Seed: p.seed, Sets: append(slices.Clip(p.opts.Sets), sets...)}
	defer experiment.RecoverRun(&err, &rp)
	l, err := p.load(sets)
	if err == nil {
		var pr Probe
		if pr, err = p.store.run(l, sets, p.opts.Simulate); err == nil {
			pr.RateRPS = p.opts.TargetRate
			p.runs[f.Key()] = len(p.ran)
			p.ran = append(p.ran, planRun{fleet: f.Clone(), costPerHour: p.space.CostPerHour(f), Probe: pr})
			if p.progress != nil {
				p.progress(len(p.ran), p.progressText())
			}
			return pr.MeetsStrict(p.target), nil
		}
	}
	return false, fmt.Errorf("plan: %s: %w", p.space.Describe(f), err)
}

// Unservable reports, as an error, a target rate no fleet served, naming
// the best fleet found: the highest attainment, then the cheapest.
func (p *Planner) Unservable() error {
	if p.choice.Found {
		return nil
	}
	if len(p.ran) == 0 {
		return fmt.Errorf("no fleet was run")
	}
	best := &p.ran[0]
	for i := range p.ran {
		r := &p.ran[i]
		if r.Attainment > best.Attainment || r.Attainment == best.Attainment && r.costPerHour < best.costPerHour {
			best = r
		}
	}
	return fmt.Errorf("no fleet in the search space serves %g req/s with attainment ≥ %s; the best found, %s "+
		"($%.2f/h), reached %s: widen the plan's counts or hardware, or lower --target-rate",
		p.opts.TargetRate, percentText(p.target), p.space.Describe(best.fleet), best.costPerHour, percentText(best.Attainment))
}

// Unserved reports the fleets whose run left requests unserved (dropped or
// failed), naming the first in the table's order, or returns nil.
func (p *Planner) Unserved() error {
	runs, _ := p.sorted()
	n, first := 0, -1
	for i, r := range runs {
		if r.unserved != nil {
			if n++; first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d fleets left requests unserved; with %s: %w",
		n, len(runs), p.space.Describe(runs[first].fleet), runs[first].unserved)
}

// progressText is the progress line's text: the fleets run and the
// cheapest of them that met the target.
func (p *Planner) progressText() string {
	var best *planRun
	for i := range p.ran {
		if r := &p.ran[i]; r.MeetsStrict(p.target) && (best == nil || r.costPerHour < best.costPerHour) {
			best = r
		}
	}
	if best == nil {
		return fmt.Sprintf("%d fleets run; none meets the target yet", len(p.ran))
	}
	return fmt.Sprintf("%d fleets run; cheapest meeting the target: %s at $%.2f/h", len(p.ran), p.space.Describe(best.fleet), best.costPerHour)
}
