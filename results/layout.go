package results

// The files and folders of handoff's output directories, named once: a
// run's (handoff run -o), a sweep's (handoff sweep and merge), a goodput
// search's and a plan's (-o). The commands write them, and the plot and
// report packages read them, by these names (a run directory through
// results/rundir, a sweep's through results/sweepdir).
const (
	// A run directory.
	SummaryFile  = "summary.json"  // the run's summary (WriteJSON)
	RequestsFile = "requests.csv"  // one row per request (WriteRequestsCSV)
	ScenarioFile = "scenario.yaml" // the effective scenario, every default filled
	TimelineFile = "timeline.csv"  // every instance sampled over time
	LinksFile    = "links.csv"     // every network link's traffic, with a network
	FleetFile    = "fleet.csv"     // each pool's instance counts at every change, when the fleet changes
	MetricsFile  = "metrics.om"    // vLLM's Prometheus metrics over time, OpenMetrics text (--metrics openmetrics)

	// A sweep directory: a manifest, the table, and one run directory per
	// point under PointsDir/<id>, each with its PointRecordFile written
	// last.
	SweepManifestFile = "sweep.json"
	SweepResultsFile  = "results.csv"
	SweepReplicasFile = "replicas.csv" // with replicas: each configuration's spread
	PointsDir         = "points"
	PointRecordFile   = "point.json"

	// A goodput search's and a plan's tables, and every run they made
	// under ProbesDir/<id>: its summary (SummaryFile) and its record,
	// ProbeRecordFile, written last.
	GoodputFile     = "goodput.csv"
	PlanFile        = "plan.csv"
	ProbesDir       = "probes"
	ProbeRecordFile = "probe.json"

	// The figures of any of them.
	PlotsDir = "plots"
)
