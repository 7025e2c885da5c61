// Package sweeprun runs a sweep: `handoff sweep` and `handoff merge`
// without their flags and rendering. Run plans the points of a scenario's
// sweep (its sweep: block and --vary axes, one shard of them), checks the
// output directory and every point before it writes anything, runs the
// points on several goroutines, each written as soon as it finishes (so
// that a rerun resumes), and writes the table and the plots; Merge joins
// the directories of a sharded sweep. The directory's format is
// results/sweepdir's; this package decides what goes in it.
//
// No process state: warnings go to the writer in the options, progress to
// the Progress given, and an interruption comes through the context.
//
// Reading guide: run.go, Run and its options and result; plan.go, the
// points of a sweep and how one is loaded or replayed; pool.go, the
// goroutines that check and run the points; point.go, a finished point's
// files; merge.go, Merge.
package sweeprun
