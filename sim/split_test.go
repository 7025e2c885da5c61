package sim_test

import (
	"flag"
	"testing"

	"handoff/hardware"
	"handoff/models/network"
	"handoff/sim"
	"handoff/sim/parallel"
)

var (
	splitCases = flag.Int("split.cases", 600, "swarm cases TestSplitMatchesWhole draws")
	splitSeed  = flag.Uint64("split.seed", 0, "the first swarm seed TestSplitMatchesWhole draws")
)

// TestSplitMatchesWhole runs the swarm's cases (made round-robin and open
// loop, sim.SplitCase) whole and split on 2 to 4 cores (package
// sim/parallel), and requires the same result of both — every record,
// instance counter, timeline sample, lock-up chain and the ITL histogram —
// or the same error; and that enough cases split to mean something. CI
// draws more, from a seed of its commit (.ci/run); replay a failure with
// -split.seed=S -split.cases=1.
func TestSplitMatchesWhole(t *testing.T) {
	split := 0
	for k := range uint64(*splitCases) {
		seed := *splitSeed + k
		if splitMatches(t, seed, 2+int(seed%3), func() *sim.Config { return sim.SplitCase(t, seed) }) {
			split++
		}
	}
	if *splitCases >= 60 && split < *splitCases/6 {
		t.Fatalf("only %d of %d cases split", split, *splitCases)
	}
	t.Logf("%d of %d cases split", split, *splitCases)
}

// TestSplitWideFleets is TestSplitMatchesWhole on fleets four times as
// wide (sim.SplitCaseWide: 8 to 16 instances) split on 2 to 7 cores, so
// that shards hold several instances each, unequally.
func TestSplitWideFleets(t *testing.T) {
	split := 0
	for k := range uint64(*splitCases / 3) {
		seed := *splitSeed + k
		if splitMatches(t, seed, 2+int(seed%6), func() *sim.Config { return sim.SplitCaseWide(t, seed) }) {
			split++
		}
	}
	if *splitCases >= 60 && split < *splitCases/18 {
		t.Fatalf("only %d of %d cases split", split, *splitCases/3)
	}
}

// TestSplitKeepsTheLinks: a colocated fleet on a network (a scenario's
// link kind gives every instance an egress and an ingress link) lists
// its links, idle, split as whole.
func TestSplitKeepsTheLinks(t *testing.T) {
	split := 0
	for seed := uint64(0); split < 20 && seed < 200; seed++ {
		linked := func() *sim.Config {
			cfg := sim.SplitCase(t, seed)
			names, devices := make([]string, len(cfg.Instances)), make([]int, len(cfg.Instances))
			for i, in := range cfg.Instances {
				names[i], devices[i] = in.Name, max(in.GPUs, 1)
			}
			cfg.Topology = network.NewNICTopology(hardware.Link{Name: "nic", BandwidthBps: 50e9, LatencyNs: 2_000}, names, devices)
			return cfg
		}
		if splitMatches(t, seed, 2, linked) {
			split++
		}
	}
	if split == 0 {
		t.Fatal("no case split")
	}
}

// splitMatches runs the configuration build returns whole and on cores
// cores, when it splits, and fails t unless both give the same result or
// the same error; it reports whether the configuration split.
func splitMatches(t *testing.T, seed uint64, cores int, build func() *sim.Config) bool {
	t.Helper()
	cfg := build()
	if sp, _ := sim.NewSplit(cfg, cores); sp == nil {
		return false
	}
	whole, errWhole := sim.Run(cfg)
	cfgParts := build()
	parts, errParts := parallel.Run(cfgParts, cores, nil)
	if (errWhole == nil) != (errParts == nil) || errWhole != nil && errWhole.Error() != errParts.Error() {
		t.Fatalf("seed %d: whole: %v; split: %v", seed, errWhole, errParts)
	}
	if errWhole != nil {
		return true
	}
	if whole.Records == nil { // a sink took them
		whole.Records, parts.Records = sim.Collected(cfg), sim.Collected(cfgParts)
	}
	if diff := sim.SameSplitResult(whole, parts); diff != "" {
		t.Fatalf("seed %d on %d cores: %s", seed, cores, diff)
	}
	return true
}
