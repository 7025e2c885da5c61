// Package parallel runs one simulation on more than one core, with outputs
// byte-identical to the run on one (less wall time and the event count,
// which measure the simulator's own work).
//
// Run chooses between two forms, and says which and why in one note:
//
//   - split.go: a fleet whose instances never affect one another
//     (sim.NewSplit: colocated, round_robin, nothing that couples them) runs
//     as shards, a sim.Run each on its own goroutine: a reader routes the
//     workload and feeds each shard its requests, and a merger hands the
//     shards' records to the run's sink in the whole run's ID order;
//     sim.Split.Merge joins their results.
//   - plan.go, source.go, sink.go: any other fleet runs as one event loop
//     (package sim has no goroutines, and stays so), with the workload's
//     reader ahead of it (prefetch) and the records' consumers behind it
//     (asyncSink), each joined to the loop by a sequence that neither
//     reorders nor changes anything. A workload whose next request depends
//     on how the run goes — a closed loop's users, a session's turns — is
//     read in step with the loop.
//
// docs/PARALLEL.md says what couples instances, why the outputs are the
// same, and what each form gains.
package parallel
