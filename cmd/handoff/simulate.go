package main

import (
	"os"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/sim"
)

// simulateFunc is simulate's signature. Commands keep one in their
// options (nil: simulate), so that a test can put a failing one in its
// place.
type simulateFunc = experiment.Simulate

// simulate is experiment.Run with the scenario's warnings on the
// process's stderr.
func simulate(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
	return experiment.Run(l, os.Stderr, configure...)
}
