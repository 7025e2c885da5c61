package scenarios

import (
	"flag"

	"handoff/sim"
)

var (
	swarmSeed  = flag.Uint64("swarm.seed", 1, "first seed of the scenario swarm")
	swarmCases = flag.Int("swarm.cases", 120, "scenarios the scenario swarm draws")
)

// For the scenario swarm's test, which runs the commands and so lives in
// package scenarios_test (they import this package): the draw and its
// flags.
var (
	SwarmSeed  = swarmSeed
	SwarmCases = swarmCases
)

// SwarmScenario is the swarm's draw of seed (swarmScenario).
func SwarmScenario(seed uint64, root string) (doc string, tags []string, rateRPS float64) {
	return swarmScenario(seed, root)
}

// SameRun is sameRun: two runs agree exactly.
func SameRun(a, b *sim.Result) bool { return sameRun(a, b) }
