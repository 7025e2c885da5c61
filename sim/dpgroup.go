package sim

import (
	"fmt"

	"handoff/models/perf"
)

// Data-parallel groups.
//
// An instance serving a MoE model with DP attention ranks is DP engines —
// each its own scheduler and KV cache, as each DP rank is its own engine
// core in vLLM (vllm/v1/engine/core.py, DPEngineCoreProc) — whose MoE
// layers form one expert-parallel group, so they step together: when any
// rank has work every rank runs a forward pass, the idle ones a dummy
// batch (execute_dummy_batch), and the step lasts as long as the slowest
// rank's (perf.GroupTimer). Here each rank is a replica of its own,
// consecutive in Config.Instances (Instance.DPRank 0 to DPRanks−1), and a
// group plans all its ranks at once, when none has a step in flight.

// dpGroup is one data-parallel group in a run.
type dpGroup struct {
	first, size int           // its ranks are replicas first … first+size−1
	pending     int           // ranks whose step in flight has not been handled yet
	batches     []*perf.Batch // the step's batch per rank (nil: dummy), reused
	timer       perf.GroupTimer
}

// checkGroups validates the data-parallel ranks of cfg: consecutive, from
// rank 0, with a group timer.
func (c *Config) checkGroups() error {
	for i := 0; i < len(c.Instances); {
		in := &c.Instances[i]
		if in.DPRanks <= 1 {
			if in.DPRank != 0 {
				return fmt.Errorf("sim: instance %s: dp rank %d without dp ranks", in.Name, in.DPRank)
			}
			i++
			continue
		}
		if _, ok := in.Timer.(perf.GroupTimer); !ok {
			return fmt.Errorf("sim: instance %s: a data-parallel rank needs a group step timer", in.Name)
		}
		for r := range in.DPRanks {
			if i+r >= len(c.Instances) || c.Instances[i+r].DPRank != r || c.Instances[i+r].DPRanks != in.DPRanks {
				return fmt.Errorf("sim: instance %s: its %d data-parallel ranks must follow it in order",
					in.Name, in.DPRanks)
			}
		}
		i += in.DPRanks
	}
	return nil
}

// initGroups builds the run's data-parallel groups and points each rank's
// replica at its group; other replicas get group −1.
func (c *cluster) initGroups() {
	for i := range c.replicas {
		c.replicas[i].group = -1
	}
	for i := 0; i < len(c.cfg.Instances); i++ {
		in := &c.cfg.Instances[i]
		if in.DPRanks <= 1 || in.DPRank != 0 {
			continue
		}
		g := int32(len(c.groups))
		c.groups = append(c.groups, dpGroup{first: i, size: in.DPRanks,
			batches: make([]*perf.Batch, in.DPRanks), timer: in.Timer.(perf.GroupTimer)})
		for r := range in.DPRanks {
			c.replicas[i+r].group = g
		}
	}
}

// kickGroup starts group g's next step when none of its ranks has one in
// flight and any has work: every rank plans, and each with a batch gets
// its step's end at the group's price (the idle ones run a dummy step and
// stay free to be planned with the next).
func (c *cluster) kickGroup(g int32) {
	grp := &c.groups[g]
	if grp.pending > 0 {
		return
	}
	c.kicking = true
	any := false
	for r := range grp.size {
		grp.batches[r] = c.plan(grp.first + r)
		any = any || grp.batches[r] != nil
	}
	c.kicking = false
	if !any {
		return
	}
	d := max(grp.timer.GroupStepNs(grp.batches), 1)
	for r, b := range grp.batches {
		if b == nil {
			continue
		}
		i := grp.first + r
		c.replicas[i].stepStartNs = c.nowNs
		c.busyWith(i, b, d)
		c.pushStep(i, c.nowNs+d)
		grp.pending++
	}
}

// stepHandled notes that replica i's part of its group's step has been
// handled; the last one frees the group to plan its next.
func (c *cluster) stepHandled(i int) {
	if g := c.replicas[i].group; g >= 0 {
		c.groups[g].pending--
	}
}

// balanceRank is the rank of i's group that vLLM's data-parallel load
// balancer sends a request addressed to the instance: the lowest waiting
// × 4 + running, the first in rank order on ties
// (DPLBAsyncMPClient.get_core_engine_for_request in
// vllm/v1/engine/core_client.py). vLLM reads counts the coordinator
// publishes every 100 ms plus its own increments since; this reads the
// ranks' live counts, with a decoder's waiting counting the requests
// routed to it whose prefill is still running (vLLM's increments). i
// itself when it is no balanced rank.
func (c *cluster) balanceRank(i int) int {
	if i < 0 || i >= len(c.replicas) {
		return i
	}
	g := c.replicas[i].group
	if g < 0 || !c.replicas[i].cfg.DPBalance {
		return i
	}
	grp := &c.groups[g]
	best, bestScore := i, -1
	for r := range grp.size {
		rp := &c.replicas[grp.first+r]
		waiting := rp.eng.Waiting()
		if rp.cfg.Role == RoleDecode {
			waiting += max(0, rp.routed-rp.outstanding)
		}
		if score := 4*waiting + rp.eng.Running(); bestScore < 0 || score < bestScore {
			best, bestScore = grp.first+r, score
		}
	}
	return best
}
