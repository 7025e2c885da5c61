// Package search finds capacity by repeated simulation, without simulating
// anything itself: the caller passes a function that runs one
// configuration and says whether it met its SLO target.
//
//   - goodput.go: Bisection finds the highest arrival-rate scale at which a
//     fleet still meets the target (DistServe's goodput), assuming that
//     meeting it is monotone in the rate: met at a rate, met at every lower
//     rate.
//   - plan.go: Plan is the plan block of a scenario, the space of fleets to
//     search; Space is the same resolved against the scenario's pools.
//   - cheapest.go: Cheapest finds the cheapest fleet in a Space that meets
//     the target, pruning with the assumption that adding instances to a
//     pool never makes a fleet miss a target it met; Grid checks every
//     fleet and is the reference the pruned search is tested against.
//
// The package is pure: no goroutines, no clock, no I/O. The evaluation
// functions are called sequentially, in a deterministic order.
package search
