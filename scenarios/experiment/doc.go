// Package experiment is handoff's application layer: what a command does
// with a loaded scenario, apart from its flags and its rendering. Run
// builds the scenario, simulates it and summarises the run, as `handoff
// run` and every probe of `goodput`, `plan` and `sweep` do; the CLI keeps
// only flags → options → a call here → output.
//
// It sits beside the packages that expand a sweep (scenarios/sweep) and
// search over rates and fleets (scenarios/search), and uses no process
// state: warnings go to the writer the caller passes, never to os.Stderr.
//
// Reading guide: run.go, the pipeline and the run information a summary
// needs from a simulation; stream.go, how a run's records stream as its
// requests end (the Summarizer, the unserved and SLO limit counts) unless
// KeepRecords; simulate.go, the Simulate hook the other
// layers call (a test puts a failing one in its place) and --set parsing;
// replay.go, how a run is named to be replayed alone, and a panic in one
// recovered as an InternalError that says so; inputs.go, the hashes of the
// files a scenario reads, which saved results are checked against;
// rundir.go, a run's directory (run -o), its requests.csv written as the
// run goes, and its vLLM bench JSON;
// timeline.go, the timeline sampling of a run and the simulator's rows
// of timeline.csv, links.csv and fleet.csv, converted for results/rundir,
// which owns their format; trace.go, which requests a run's journey trace follows (run
// --trace-select): the first, traced as the run goes, or chosen from the
// finished run's records and traced in a second, identical run.
//
// Beside it: sweeprun runs a sweep (resume, shards, merge, replicas), in
// a directory whose format is results/sweepdir's; capacity runs the
// goodput search and the fleet planner, saving their probes; calibration
// runs the calibration set against the measurements, fitting first if
// asked. Every file they write goes through results/outdir.
package experiment
