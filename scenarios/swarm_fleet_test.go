package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"handoff/models/autoscale"
)

// The swarm's draws of a pool's lower KV tiers, its placement in a
// topology and its autoscaler, and of the scenario's faults: what makes a
// fleet change or spill.

// offloadNames are the offload modes a tier may name.
func offloadNames() []string {
	var out []string
	for name := range offloads {
		if name != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// tiers draws, for a third of the GPU pools, lower KV tiers in the order
// validation requires (a host tier, reported true; a disk; the shared
// store), each written on completion, on eviction or both; a prefill pool
// with the store may hand off through it. A hybrid model's pool always
// has a host tier, written on completion (its sliding-window blocks go
// down no other way).
func (d *swarmDoc) tiers(p *swarmPool) (host bool) {
	rng := d.rng
	d.tiered, d.handoff = false, false
	if rng.IntN(2) > 0 {
		return false
	}
	d.tag("tiers")
	if d.hybrid {
		d.tag("hybrid-tiers")
	}
	d.tiered = true
	offload := func(kind string) string {
		switch {
		case rng.IntN(5) == 0:
			return "" // completion, the default
		case d.hybrid && kind == "host":
			return ", offload: " + pick(rng, "completion", "both")
		}
		return ", offload: " + pickOf(rng, offloadNames())
	}
	kinds := slices.SortedFunc(maps.Keys(tierKinds), func(a, b string) int { return int(tierKinds[a]) - int(tierKinds[b]) })
	d.line("    kv_tiers:")
	for _, kind := range kinds {
		switch {
		case rng.IntN(3) == 0 && !(kind == "store" && !host) && !(kind == "host" && d.hybrid):
		case kind == "host":
			host = true
			extra := ""
			if rng.IntN(2) == 0 {
				extra = fmt.Sprintf(", read_bandwidth: %dGB/s, write_bandwidth: %dGB/s, latency: %dus", 1+rng.IntN(64), 1+rng.IntN(64), rng.IntN(10))
			}
			d.line("      - {tier: host, capacity: %dMB%s%s}", 10+rng.IntN(2000), extra, offload(kind))
		case kind == "disk":
			d.line("      - {tier: disk, capacity: %dMB, read_bandwidth: %dGB/s, write_bandwidth: %dGB/s, latency: %dus%s}",
				10+rng.IntN(4000), 1+rng.IntN(10), 1+rng.IntN(5), rng.IntN(200), offload(kind))
		case kind == "store":
			d.store = true
			d.line("      - {tier: store}")
			d.handoff = p.role == "prefill" && rng.IntN(4) > 0
		default:
			panic("swarm: no draw of tier " + kind)
		}
	}
	return host
}

// placement draws, in a topology case, where a pool goes: a datacenter
// (when the topology names them) and a rule, or a named domain of its
// own when all its instances fit one; some pools keep the defaults.
func (d *swarmDoc) placement(p *swarmPool) {
	if !d.topology {
		return
	}
	rng := d.rng
	var parts []string
	if len(d.datacenter) > 0 && rng.IntN(3) > 0 {
		parts = append(parts, "datacenter: "+pickOf(rng, d.datacenter))
	}
	switch gpus := p.count * p.dp * p.tp * max(p.pp, 1); {
	case gpus*3 <= d.domainSize && rng.IntN(3) == 0: // room for an autoscaler's max
		p.placed = true
		parts = append(parts, "domain: d-"+p.name)
	case rng.IntN(3) > 0:
		parts = append(parts, "rule: "+pickOf(rng, slices.Sorted(maps.Keys(placementRules))))
	}
	if len(parts) > 0 {
		d.line("    placement: {%s}", strings.Join(parts, ", "))
	}
}

// fleetTimeUs draws a time of the run for a fleet event: before the end
// of the arrivals the loader checks it against, and mostly within the
// arrivals' expected span.
func (d *swarmDoc) fleetTimeUs() int64 {
	limit := d.spanUs
	if d.horizonUs > 0 {
		limit = min(limit, d.horizonUs)
	}
	return d.rng.Int64N(max(limit, 1))
}

// autoscale draws, for a third of the pools without data-parallel ranks
// (none of a split case's), an autoscaler of a registered policy with its section, bounds around
// the count and its delays.
func (d *swarmDoc) autoscale(p *swarmPool) {
	rng := d.rng
	if p.dp > 1 || rng.IntN(2) > 0 || d.split {
		return
	}
	policy := pickOf(rng, autoscaleNames())
	d.tag("autoscale_" + policy)
	lo, hi := 1+rng.IntN(p.count), p.count+rng.IntN(3)
	if p.placed {
		hi = p.count // a named domain holds the pool at its max
	}
	p.min, p.max, p.autoscaled = lo, hi, true
	parts := []string{"policy: " + policy, fmt.Sprintf("min: %d", lo), fmt.Sprintf("max: %d", hi)}
	for _, f := range []string{"interval", "staleness", "provisioning"} {
		if rng.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf("%s: %dms", f, 1+rng.IntN(200)))
		}
	}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("load_bandwidth: %dGB/s", 10+rng.IntN(1000)))
	}
	switch autoscalePolicies[policy].section {
	case "schedule":
		parts = append(parts, d.schedule(lo, hi))
	case "hpa":
		parts = append(parts, d.hpa())
	case "sla":
		if s := d.sla(); s != "" {
			parts = append(parts, s)
		}
	}
	d.line("    autoscale: {%s}", strings.Join(parts, ", "))
}

// schedule draws one to three steps at increasing times of the run.
func (d *swarmDoc) schedule(lo, hi int) string {
	rng := d.rng
	var at []int64
	for range 1 + rng.IntN(3) {
		if t := d.fleetTimeUs(); !slices.Contains(at, t) {
			at = append(at, t)
		}
	}
	slices.Sort(at)
	var steps []string
	for _, t := range at {
		steps = append(steps, fmt.Sprintf("{at: %dus, count: %d}", t, lo+rng.IntN(hi-lo+1)))
	}
	return "schedule: [" + strings.Join(steps, ", ") + "]"
}

// hpa draws the HPA's metric and target, and for some its tolerance and
// its scale-up and scale-down behaviour.
func (d *swarmDoc) hpa() string {
	rng := d.rng
	metric := pick(rng, autoscale.MetricWaiting, autoscale.MetricRunning, autoscale.MetricKVUsage)
	target := float64(1 + rng.IntN(16))
	if metric == autoscale.MetricKVUsage {
		target = 0.1 + 0.9*rng.Float64()
	}
	parts := []string{"metric: " + metric, fmt.Sprintf("target: %.2f", target)}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("tolerance: %.2f", 0.5*rng.Float64()))
	}
	for _, dir := range []string{"scale_up", "scale_down"} {
		if rng.IntN(4) > 0 {
			parts = append(parts, dir+": "+d.hpaRules())
		}
	}
	return "hpa: {" + strings.Join(parts, ", ") + "}"
}

// hpaRules draws one direction's stabilization window, select policy and
// step limits.
func (d *swarmDoc) hpaRules() string {
	rng := d.rng
	sel := pick(rng, autoscale.SelectMax, autoscale.SelectMin, autoscale.SelectDisabled)
	var steps []string
	for range 1 + rng.IntN(2) {
		steps = append(steps, fmt.Sprintf("{type: %s, value: %d, period: %dms}", pick(rng, autoscale.StepPods, autoscale.StepPercent),
			1+rng.IntN(100), 1+rng.IntN(1000)))
	}
	return fmt.Sprintf("{stabilization: %dms, select: %s, policies: [%s]}", rng.IntN(1000), sel, strings.Join(steps, ", "))
}

// sla draws, for some SLA planners, the predictor, the Kalman filter's
// parameters and the corrections.
func (d *swarmDoc) sla() string {
	rng := d.rng
	var parts []string
	if rng.IntN(3) > 0 {
		parts = append(parts, "predictor: "+pick(rng, autoscale.PredictConstant, autoscale.PredictKalman))
	}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("kalman: {q_level: %.3f, q_trend: %.3f, r: %.3f, min_points: %d}",
			0.001+rng.Float64(), 0.001+rng.Float64(), 0.001+rng.Float64(), 1+rng.IntN(6)))
	}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("correction: %v", rng.IntN(2) == 0))
	}
	if rng.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf("prefill_correction_max: %.2f", 0.1+2*rng.Float64()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "sla: {" + strings.Join(parts, ", ") + "}"
}

// faults draws, for a third of the cases but split ones, fault events of every kind the
// loader knows on pools without data-parallel ranks (link faults on the
// links of one link kind), and for some fault rates.
func (d *swarmDoc) faults() {
	rng := d.rng
	if rng.IntN(3) > 0 || d.split {
		return
	}
	var events []string
	for range 1 + rng.IntN(3) {
		if e := d.faultEvent(pickOf(rng, slices.Sorted(maps.Keys(faultKinds)))); e != "" {
			events = append(events, e)
		}
	}
	d.tag("faults")
	d.line("faults:")
	if len(events) > 0 {
		d.line("  events:")
		for _, e := range events {
			d.line("    - %s", e)
		}
	}
	if rng.IntN(2) == 0 && !slices.ContainsFunc(d.pools, func(p swarmPool) bool { return p.dp > 1 }) { // a rank's faults are not modelled
		rates := []string{fmt.Sprintf("until: %dus", 1+d.fleetTimeUs())}
		if rng.IntN(2) == 0 {
			rates = append(rates, fmt.Sprintf("crash_mtbf: %dms", 1+rng.IntN(5000)))
		}
		if rng.IntN(2) == 0 {
			rates = append(rates, fmt.Sprintf("straggler_mtbf: %dms, straggler_duration: %dms, straggler_factor: %.2f",
				1+rng.IntN(5000), 1+rng.IntN(500), 1.1+3*rng.Float64()))
		}
		d.line("  rates: {%s}", strings.Join(rates, ", "))
	}
}

// faultEvent draws one fault of kind on an instance (by name or by pool)
// or a link, or "" when the case has nowhere to put it.
func (d *swarmDoc) faultEvent(kind string) string {
	rng := d.rng
	at := fmt.Sprintf("at: %dus", d.fleetTimeUs())
	if kind == "link_down" || kind == "link_degrade" {
		if d.topology {
			return "" // a hierarchy's links are named by where its instances are placed
		}
		p := d.pools[rng.IntN(len(d.pools))]
		link := fmt.Sprintf("%s-%d%s/%s", p.name, rng.IntN(p.max), map[bool]string{true: "-dp0"}[p.dp > 1], pick(rng, "egress", "ingress"))
		e := fmt.Sprintf("{kind: %s, link: %s, %s, duration: %dms", kind, link, at, 1+rng.IntN(500))
		if kind == "link_degrade" {
			e += fmt.Sprintf(", factor: %.2f", 0.05+0.9*rng.Float64())
		}
		return e + "}"
	}
	var pools []swarmPool
	for _, p := range d.pools {
		if p.dp == 1 {
			pools = append(pools, p)
		}
	}
	if len(pools) == 0 {
		return ""
	}
	p := pools[rng.IntN(len(pools))]
	target := "pool: " + p.name
	if rng.IntN(2) == 0 {
		target = fmt.Sprintf("instance: %s-%d", p.name, rng.IntN(p.max))
	}
	if kind == "crash" {
		return fmt.Sprintf("{kind: crash, %s, %s}", target, at)
	}
	return fmt.Sprintf("{kind: %s, %s, %s, duration: %dms, factor: %.2f}", kind, target, at, 1+rng.IntN(500), 1.1+3*rng.Float64())
}
