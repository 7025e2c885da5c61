package experiment

import (
	"io"
	"math"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/results/rundir"
	"handoff/scenarios"
	"handoff/sim"
)

// Finished is a simulated run: the scenario as loaded, its summary and
// what the simulator returned (Run's results).
type Finished struct {
	Loaded  *scenarios.Loaded
	Summary results.Summary
	Result  *sim.Result
}

// Unserved reports the requests the run could not serve (dropped or
// failed), naming the first, or returns nil.
func (r *Finished) Unserved() error {
	return results.Unserved(r.Result.Records, WorkloadName(r.Loaded))
}

// WriteRunDir writes a run's directory (`handoff run -o DIR`), names in
// results/layout.go: summary.json, requests.csv, scenario.yaml (the
// effective scenario, its paths relative to dir), timeline.csv (the run
// must have sampled it: WithTimeline), links.csv when the run has a
// network and fleet.csv when its fleet changes (autoscaling, faults):
// the formats are results/rundir's. dir is made if missing; every file
// goes through outdir.WriteIn.
func WriteRunDir(dir string, run *Finished) error {
	if err := outdir.MakeDir(dir); err != nil {
		return err
	}
	eff, err := run.Loaded.Effective(dir)
	if err != nil {
		return err
	}
	res, tiers := run.Result, len(run.Result.Tiers) > 0
	type file struct {
		name  string
		write func(io.Writer) error
	}
	files := []file{
		{results.SummaryFile, func(w io.Writer) error { return results.WriteJSON(w, run.Summary) }},
		{results.RequestsFile, func(w io.Writer) error {
			return rundir.WriteRequests(w, res.Records, InstanceNames(res), tiers)
		}},
		{results.ScenarioFile, func(w io.Writer) error { _, err := w.Write(eff); return err }},
		{results.TimelineFile, func(w io.Writer) error { return WriteTimelineCSV(w, res.Timelines, tiers) }},
	}
	if len(res.Links) > 0 {
		files = append(files, file{results.LinksFile, func(w io.Writer) error { return WriteLinksCSV(w, res.Links, res.SimTimeNs) }})
	}
	if res.Fleet != nil {
		files = append(files, file{results.FleetFile, func(w io.Writer) error { return WriteFleetCSV(w, res.Fleet) }})
	}
	for _, f := range files {
		if err := outdir.WriteIn(dir, f.name, f.write); err != nil {
			return err
		}
	}
	return nil
}

// WriteBenchJSON writes the run as the result JSON of vLLM's `vllm bench
// serve --save-result` to file (`handoff run --bench-json FILE`).
func WriteBenchJSON(file string, run *Finished) error {
	return outdir.WriteFile(file, func(w io.Writer) error {
		res := run.Result
		return results.WriteBenchJSON(w, res.Records, res.ITL, run.Summary, benchMeta(run))
	})
}

// benchMeta is what a vLLM result names of the run: the scenario, the
// model, and the rate offered ("inf" for a closed loop, as vLLM's
// --request-rate inf with --max-concurrency).
func benchMeta(run *Finished) results.BenchMeta {
	l, sum := run.Loaded, run.Summary
	m := results.BenchMeta{Label: l.Name, Model: l.Model, RequestRate: sum.Throughput.OfferedPerS}
	if c := l.Workload.Client.Concurrency; c > 0 {
		m.RequestRate, m.MaxConcurrency = math.Inf(1), c
	}
	return m
}
