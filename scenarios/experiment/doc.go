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
// needs from a simulation; timeline.go, the timeline sampling of a run
// and its timeline.csv and links.csv.
package experiment
