package sim_test

import (
	"flag"
	"testing"

	"handoff/sim"
	"handoff/sim/parallel"
)

var splitCases = flag.Int("split.cases", 600, "swarm cases TestSplitMatchesWhole draws")

// TestSplitMatchesWhole runs the swarm's cases (made round-robin and open
// loop, sim.SplitCase) whole and split on 2 to 4 cores (package
// sim/parallel), and requires the same result of both — every record,
// instance counter, timeline sample, lock-up chain and the ITL histogram —
// or the same error; and that enough cases split to mean something.
func TestSplitMatchesWhole(t *testing.T) {
	split := 0
	for seed := range uint64(*splitCases) {
		cfg := sim.SplitCase(t, seed)
		cores := 2 + int(seed%3)
		if sp, _ := sim.NewSplit(cfg, cores); sp == nil {
			continue
		}
		split++
		whole, errWhole := sim.Run(cfg)
		cfgParts := sim.SplitCase(t, seed)
		parts, errParts := parallel.Run(cfgParts, cores, nil)
		if (errWhole == nil) != (errParts == nil) || errWhole != nil && errWhole.Error() != errParts.Error() {
			t.Fatalf("seed %d: whole: %v; split: %v", seed, errWhole, errParts)
		}
		if errWhole != nil {
			continue
		}
		if whole.Records == nil { // a sink took them
			whole.Records, parts.Records = sim.Collected(cfg), sim.Collected(cfgParts)
		}
		if diff := sim.SameSplitResult(whole, parts); diff != "" {
			t.Fatalf("seed %d on %d cores: %s", seed, cores, diff)
		}
	}
	if split < *splitCases/6 {
		t.Fatalf("only %d of %d cases split", split, *splitCases)
	}
	t.Logf("%d of %d cases split", split, *splitCases)
}
