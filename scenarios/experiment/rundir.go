package experiment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"handoff/results"
	"handoff/results/openmetrics"
	"handoff/results/outdir"
	"handoff/results/rundir"
	"handoff/scenarios"
	"handoff/scenarios/workload"
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
	return Unserved(r.Result, WorkloadName(r.Loaded))
}

// RunDir is a run's directory (`handoff run -o DIR`) being written: its
// requests.csv streams into a temporary file as the run's requests end
// (Attach), and Write writes the other files and moves it in place. Close
// removes what an unfinished run left.
type RunDir struct {
	dir     string
	created bool         // dir did not exist: Close removes it if nothing was written
	reqs    *outdir.File // requests.csv, nil once written or discarded
	rows    *rundir.RequestsWriter
	metrics *openmetrics.Recorder // metrics.om's, with AttachMetrics
}

// CreateRunDir makes dir if missing and starts its requests.csv.
func CreateRunDir(dir string) (*RunDir, error) {
	_, err := os.Stat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := outdir.MakeDir(dir); err != nil {
		return nil, err
	}
	f, err := outdir.Create(dir, results.RequestsFile)
	if err != nil {
		return nil, err
	}
	return &RunDir{dir: dir, created: created, reqs: f}, nil
}

// Attach is a configure function for Run: the run writes each request's
// row of requests.csv as the request ends — unless KeepRecords was asked
// for before, and then Write writes them from the records.
func (d *RunDir) Attach(cfg *sim.Config) {
	if keeps(cfg) {
		return
	}
	names := make([]string, len(cfg.Instances))
	tiers := false
	for i := range cfg.Instances {
		names[i] = cfg.Instances[i].Name
		tiers = tiers || len(cfg.Instances[i].Engine.Tiers) > 0
	}
	_, sessions := cfg.Source.(sim.SessionSource)
	d.rows = rundir.NewRequestsWriter(d.reqs.W, names, sessions, tiers, cfg.ClassNames)
	cfg.Records = chain(cfg.Records, d.rows)
}

// Close discards a requests.csv that Write did not reach, and the
// directory too when CreateRunDir made it (a run that failed leaves no
// empty directory behind).
func (d *RunDir) Close() {
	if d.reqs != nil {
		d.reqs.Discard()
		d.reqs = nil
		if d.created {
			os.Remove(d.dir) // only if empty
		}
	}
}

// WriteRunDir writes the directory of a run that kept its records
// (KeepRecords): RunDir.Write without the streaming.
func WriteRunDir(dir string, run *Finished) error {
	d, err := CreateRunDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Write(run)
}

// Write writes the run's directory, names in results/layout.go:
// summary.json, requests.csv (streamed while the run went, or from its
// records when it kept them), scenario.yaml (the effective scenario, its
// paths relative to the directory), timeline.csv (the run must have
// sampled it: WithTimeline), links.csv when the run has a network and
// fleet.csv when its fleet changes (autoscaling, faults), and metrics.om
// with AttachMetrics: the formats are results/rundir's and
// results/openmetrics'. Every file goes through outdir (a temporary file
// renamed).
func (d *RunDir) Write(run *Finished) error {
	dir := d.dir
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
		{results.ScenarioFile, func(w io.Writer) error { _, err := w.Write(eff); return err }},
		{results.TimelineFile, func(w io.Writer) error { return WriteTimelineCSV(w, res.Timelines, tiers) }},
	}
	if len(res.Links) > 0 {
		files = append(files, file{results.LinksFile, func(w io.Writer) error { return WriteLinksCSV(w, res.Links, res.SimTimeNs) }})
	}
	if res.Fleet != nil {
		files = append(files, file{results.FleetFile, func(w io.Writer) error { return WriteFleetCSV(w, res.Fleet) }})
	}
	if write := d.metricsFile(run); write != nil {
		files = append(files, file{results.MetricsFile, write})
	}
	if err := d.writeRequests(run, tiers); err != nil {
		return err
	}
	for _, f := range files {
		if err := outdir.WriteIn(dir, f.name, f.write); err != nil {
			return err
		}
	}
	return nil
}

// classNames are the names of a run's traffic classes, in order.
func classNames(cs []results.ClassSummary) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// writeRequests finishes requests.csv: the rows streamed, or the records.
func (d *RunDir) writeRequests(run *Finished, tiers bool) error {
	res := run.Result
	f := d.reqs
	if f == nil {
		return fmt.Errorf("%s: written already", d.dir)
	}
	d.reqs = nil
	switch {
	case res.Records != nil:
		f.Discard()
		return outdir.WriteIn(d.dir, results.RequestsFile, func(w io.Writer) error {
			return rundir.WriteRequests(w, res.Records, InstanceNames(res), tiers, classNames(run.Summary.Classes))
		})
	case d.rows == nil:
		f.Discard()
		return fmt.Errorf("%s: the run neither kept its records (KeepRecords) nor streamed them to the directory (RunDir.Attach)", d.dir)
	case d.rows.Err() != nil:
		f.Discard()
		return fmt.Errorf("writing %s: %w", filepath.Join(d.dir, results.RequestsFile), d.rows.Err())
	}
	return f.Commit()
}

// WriteBenchJSON writes the run as the result JSON of vLLM's `vllm bench
// serve --save-result` to file (`handoff run --bench-json FILE`), dated
// date (YYYYmmdd-HHMMSS).
func WriteBenchJSON(file, date string, run *Finished) error {
	return outdir.WriteFile(file, func(w io.Writer) error {
		res := run.Result
		meta := benchMeta(run)
		meta.Date = date
		return results.WriteBenchJSON(w, res.Records, res.ITL, run.Summary, meta)
	})
}

// benchMeta is what a vLLM result names of the run: the scenario, the
// model, and the load as `vllm bench serve` would have been told to offer
// it. A closed loop is --request-rate inf with --max-concurrency; a
// synthetic workload's rate is its arrival rate (times rate_scale) and its
// burstiness the gamma shape of its gaps (1/cv²: 1 for Poisson, +Inf for
// constant gaps, as vLLM's --burstiness inf); any other source has no one
// configured rate, so its offered rate (arrivals over their span) stands
// in, with vLLM's default burstiness 1.
func benchMeta(run *Finished) results.BenchMeta {
	l, sum := run.Loaded, run.Summary
	m := results.BenchMeta{Label: l.Name, Model: l.Model, RequestRate: sum.Throughput.OfferedPerS, Burstiness: 1,
		Goodput: l.SLO.TTFT > 0 || l.SLO.TPOT > 0}
	if s := l.Workload.Synthetic; s != nil {
		m.RequestRate = float64(s.Arrival.Rate) * l.Workload.RateScale
		m.Burstiness = burstiness(s.Arrival)
	}
	if c := l.Workload.Client.Concurrency; c > 0 {
		m.RequestRate, m.MaxConcurrency, m.Burstiness = math.Inf(1), c, 1 // burstiness applies to no infinite rate
	}
	return m
}

// burstiness is vLLM's --burstiness for an arrival process: the shape of
// the gamma distribution its gaps follow.
func burstiness(a workload.Arrival) float64 {
	switch a.Process {
	case workload.ProcessGamma:
		return 1 / (a.CV * a.CV)
	case workload.ProcessConstant:
		return math.Inf(1)
	}
	return 1
}
