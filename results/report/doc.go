// Package report writes one self-contained HTML page for a handoff output
// directory — a run (summary.json), a sweep (results.csv), a goodput
// search (goodput.csv) or a plan (plan.csv) — from its saved files only,
// simulating nothing. The page fetches nothing: the CSS and the few lines
// of script that sort tables are inline, and so are the plots, drawn as
// SVG by results/plot into memory. Every figure's definition is in a
// title attribute, one hover away.
//
// A run's report holds the scenario and fleet, the summary (request
// counts, latency table and CDFs, throughput), SLO attainment and request
// goodput, the attribution by component and by owner, the preemption and
// cascade table, the lock-ups by kind and the waits-for chains between
// instances when any instance locked up, per-instance utilization with
// the timelines, the KV
// tiers when there are any, and, when the fleet changed (autoscaling,
// crashes), the Fleet section: its bill, scale-ups and faults, per pool,
// with each pool's instances over time. A run directory is read through
// results/rundir, which owns its format. A sweep's holds what it varies, the first
// point's scenario and fleet, results.csv as a table sortable by any
// column, and its plots. A goodput search's holds both max goodputs and
// the measured curve; a plan's the chosen fleet and every fleet run.
//
// Reading guide: report.go detects the directory's kind and renders the
// page through report.html.tmpl (with report.css and sort.js, all
// embedded); page.go is the page model the template walks (sections of
// facts, tables and figures); run.go, fleet.go (the scenario's fleet,
// and the Fleet section of one that changed), attribution.go and
// lockups.go build a run's sections; sweep.go a sweep's (its files read through
// results/sweepdir, which owns their format); search.go a goodput
// search's and a plan's; csvtable.go turns a CSV into a sortable table; plots.go draws
// or reads the SVG plots; defs.go holds the definitions, worded as
// docs/OUTPUTS.md.
package report
