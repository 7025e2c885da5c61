// Package capacity answers "how much can this fleet serve" and "which
// fleet serves this much", by simulation: Goodput bisects the arrival rate
// for the highest one that meets the SLO (DistServe's max goodput, and its
// looser variant), and Plan searches the pools' counts, hardware and TP for
// the cheapest fleet that serves a target rate. The search algorithms are
// scenarios/search's; this package runs their probes, saves each in the
// -o directory as it finishes (so that an interrupted search resumes), and
// writes and renders the results.
//
// No process state: warnings go to the writer in the options, progress to
// the callback given, notes to the writer given.
//
// Reading guide: fixedrate.go, the workloads both searches refuse (a
// closed loop, sessions: their rate is no input); probe.go, one run of a
// search and what it measured;
// probestore.go, the probes/ directory, checked before a probe is reused;
// goodput.go, Goodput and its two searches; goodput_out.go, its table,
// JSON, goodput.csv and plot; plan.go, Plan, its options and the search
// space; plan_search.go, the planner that prices and runs fleets;
// plan_out.go, its table, JSON, plan.csv and plot.
package capacity
