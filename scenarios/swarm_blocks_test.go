package scenarios

import (
	"fmt"
	"strings"
)

// The swarm's draws of the blocks `run` ignores and `sweep` and `plan`
// read: a sweep of at most four points, and a plan over some pools'
// counts, hardware and TP — every value one the scenario takes.

// swarmAxis is a sweep axis: a path and two values the scenario takes.
type swarmAxis struct{ path, a, b string }

// sweepAxes are the axes a case may sweep: a seed, the SLO, the router,
// the lock-up abort, the gateway, a slower rate, and a pool's count (up
// to its autoscaler's bounds, never below what its faults name) and
// sequence cap.
func (d *swarmDoc) sweepAxes() []swarmAxis {
	axes := []swarmAxis{{"seed", "3", "4"}, {"slo.ttft", "100ms", "1s"}, {"router.policy", "round_robin", "least_loaded"},
		{"metrics.lockup_abort", "500ms", "2s"}, {"gateway.latency", "0s", "1ms"}}
	if !d.fixedRate {
		axes = append(axes, swarmAxis{"workload.rate_scale", fmt.Sprint(d.rateScale), fmt.Sprint(d.rateScale / 2)})
	}
	for _, p := range d.pools {
		axes = append(axes, swarmAxis{"pools." + p.name + ".engine.max_num_seqs", "1", "8"})
		if p.autoscaled {
			axes = append(axes, swarmAxis{"pools." + p.name + ".count", fmt.Sprint(p.min), fmt.Sprint(p.max)})
		} else if !p.placed || (p.count+1)*p.dp*p.tp*max(p.pp, 1) <= d.domainSize {
			axes = append(axes, swarmAxis{"pools." + p.name + ".count", fmt.Sprint(p.count), fmt.Sprint(p.count + 1)})
		}
	}
	return axes
}

// sweep draws, for a third of the cases, a sweep block: a grid axis with
// two replicas, a zip of two axes, or a grid axis and a zip axis.
func (d *swarmDoc) sweep() {
	rng := d.rng
	if rng.IntN(3) > 0 {
		return
	}
	axes := d.sweepAxes()
	rng.Shuffle(len(axes), func(i, j int) { axes[i], axes[j] = axes[j], axes[i] })
	axis := func(ax swarmAxis) string { return fmt.Sprintf("    %s: [%s, %s]", ax.path, ax.a, ax.b) }
	d.tag("sweep_block")
	d.line("sweep:")
	switch rng.IntN(3) {
	case 0:
		if axes[0].path == "seed" { // replicas vary the seed
			axes[0] = axes[1]
		}
		d.line("  grid:")
		d.line("%s", axis(axes[0]))
		d.line("  replicas: 2")
	case 1:
		d.line("  zip:")
		d.line("%s", axis(axes[0]))
		d.line("%s", axis(axes[1]))
	default:
		d.line("  grid:")
		d.line("%s", axis(axes[0]))
		d.line("  zip:")
		d.line("%s", axis(axes[1]))
	}
}

// plan draws, for a third of the cases, a plan block over one or two GPU
// pools: counts from the pool's own (an autoscaled pool's from its min to
// its max), another Hopper for pools on one without a compute format of
// their own, double the TP where nothing pins it, and one or two
// pipeline stages for some roofline pools.
func (d *swarmDoc) plan() {
	rng := d.rng
	if rng.IntN(3) > 0 {
		return
	}
	var lines []string
	for _, p := range d.pools {
		if p.wafer || rng.IntN(3) == 0 {
			continue
		}
		lo, hi := p.count, p.count+1
		if p.autoscaled {
			lo, hi = p.min, p.max
		}
		parts := []string{fmt.Sprintf("count: [%d, %d]", lo, hi)}
		if (p.hardware == "h100-sxm" || p.hardware == "h200") && !p.pinned && rng.IntN(2) == 0 {
			parts = append(parts, "hardware: [h100-sxm, h200]")
		}
		if p.dp == 1 && !d.topology && rng.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf("tp: [%d, %d]", p.tp, 2*p.tp))
		}
		if p.roofline && p.dp == 1 && !d.topology && (d.spec == "" || d.spec == "none") && d.ppRng.IntN(3) > 0 { // its own stream: no other draw moves
			parts = append(parts, "pp: [1, 2]")
			d.tag("plan_pp")
		}
		lines = append(lines, fmt.Sprintf("    %s: {%s}", p.name, strings.Join(parts, ", ")))
	}
	if len(lines) == 0 {
		return
	}
	d.tag("plan_block")
	d.line("plan:")
	d.line("  pools:")
	for _, l := range lines {
		d.line("%s", l)
	}
}
