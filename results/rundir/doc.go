// Package rundir owns the format of a run's output directory (handoff run
// -o DIR): it writes and reads the CSV files of it, and the plot and
// report packages read a run directory through it. A run directory holds
// (names in results/layout.go):
//
//	summary.json   the run's summary (results.WriteJSON; read by ReadSummary)
//	requests.csv   one row per request (results.WriteRequestsCSV, through WriteRequests)
//	scenario.yaml  the effective scenario, every default filled (ReadScenario)
//	timeline.csv   every instance sampled over time
//	links.csv      every network link's traffic, with a network
//	fleet.csv      each pool's instance counts at every change, when the
//	               fleet changes (autoscaling, crashes)
//	metrics.om     vLLM's Prometheus metrics over the run, with --metrics
//	               openmetrics (written by results/openmetrics, not read here)
//
// Its row types are plain values that name nothing of the simulator:
// scenarios/experiment converts the simulator's results into them and
// writes the directory (WriteRunDir), so results never import sim. A
// reader gives back what its writer wrote, to the file's precision; an
// error names the file, and the line and column of a bad value.
//
// Reading guide: dir.go, which files a directory has, its summary and
// scenario; csv.go, the reading of one CSV file with line numbers;
// timeline.go, timeline.csv (with the files written before its
// preemptions, max_num_seqs and pool columns); links.go, links.csv;
// requests.go, requests.csv; fleet.go, fleet.csv.
package rundir
