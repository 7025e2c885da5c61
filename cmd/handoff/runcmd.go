package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/sim"
	"handoff/sim/journey"
)

// runOptions are the flags of `handoff run`.
type runOptions struct {
	scenario string
	outDir   string
	sets     []string
	seed     uint64

	tracePath     string // --trace: request-journey trace file, "" = none
	traceRequests int64  // --trace-requests: how many requests it follows
	traceSelect   string // --trace-select: which (traceselect.go)
	selection     traceSelection
	benchJSON     string // --bench-json: a vllm bench serve result file, "" = none
	progress      bool   // --progress: draw the progress line on stderr even when it is no terminal

	stderr   io.Writer    // the progress line's; nil = none
	simulate simulateFunc // nil: simulate
}

// defaultTraceRequests is how many requests --trace follows by default.
const defaultTraceRequests = 100

// newRunCmd builds `handoff run`. runF does the work once the flags are
// parsed; nil means runScenario (tests pass their own to check parsing).
func newRunCmd(stdout, stderr io.Writer, runF func(*runOptions, io.Writer) error) *cobra.Command {
	if runF == nil {
		runF = runScenario
	}
	opts := &runOptions{stderr: stderr}
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario and print its summary",
		Example: "  handoff run scenarios/quickstart.yaml\n" +
			"  handoff run scenarios/quickstart.yaml -o out --set pools.decode.count=4 --seed 7\n" +
			"  handoff run scenarios/quickstart.yaml --trace journey.json --trace-requests 20",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.scenario = args[0]
			if opts.traceRequests <= 0 {
				return fmt.Errorf("--trace-requests must be positive, got %d", opts.traceRequests)
			}
			var err error
			if opts.selection, err = parseTraceSelect(opts.traceSelect); err != nil {
				return err
			}
			return runF(opts, stdout)
		},
	}
	cmd.Flags().StringVarP(&opts.outDir, "out", "o", "",
		"write summary.json, requests.csv, scenario.yaml (the effective scenario), timeline.csv (KV use and batch per instance over time) and, with a network, links.csv (bytes and busy time per link) to `DIR`")
	scenarioFlags(cmd.Flags(), &opts.sets, &opts.seed)
	cmd.Flags().StringVar(&opts.tracePath, "trace", "",
		"write the journeys of the first requests as a Chrome/Perfetto trace to `FILE`")
	cmd.Flags().Int64Var(&opts.traceRequests, "trace-requests", defaultTraceRequests,
		"how many requests --trace follows (`N` > 0)")
	cmd.Flags().StringVar(&opts.traceSelect, "trace-select", "first", traceSelectHelp)
	cmd.Flags().StringVar(&opts.benchJSON, "bench-json", "",
		"also write the run as the result JSON of `vllm bench serve --save-result` to `FILE`, for dashboards that read those")
	cmd.Flags().BoolVar(&opts.progress, "progress", false,
		"draw the progress line (simulated time, requests ended) on stderr even when it is not a terminal")
	return cmd
}

// scenarioFlags adds the --set and (when seed is not nil) --seed flags that
// every command running a scenario shares.
func scenarioFlags(f *pflag.FlagSet, sets *[]string, seed *uint64) {
	f.StringArrayVar(sets, "set", nil, "override a scenario field, `path=value` (repeatable)")
	if seed != nil {
		f.Uint64Var(seed, "seed", 0, "override the scenario's seed")
	}
}

// runScenario simulates the scenario, prints its summary and writes the
// output files. A panic becomes an error that says how to replay the run.
func runScenario(opts *runOptions, stdout io.Writer) (err error) {
	if err := opts.checkOutputs(); err != nil {
		return err
	}
	l, err := experiment.Load(opts.scenario, opts.sets, opts.seed)
	if err != nil {
		return err
	}
	rp := experiment.Replay{File: l.File, Seed: l.Seed, Sets: opts.sets}
	defer experiment.RecoverRun(&err, &rp)
	var rec *journey.Recorder
	var configure []func(*sim.Config)
	if opts.tracePath != "" && opts.selection.kind == "first" {
		configure = append(configure, experiment.WithTimeline, func(cfg *sim.Config) { rec = journey.Attach(cfg, opts.traceRequests) })
	}
	if opts.outDir != "" {
		configure = append(configure, experiment.WithTimeline)
	}
	line := &simProgress{w: opts.stderr, forced: opts.progress, label: "run"}
	configure = append(configure, line.attach)
	sum, res, err := opts.simulate.Or(os.Stderr)(l, configure...)
	line.finish() // before the table, which may go to the same terminal
	if err != nil {
		return err
	}
	if err := results.WriteTable(stdout, sum); err != nil {
		return err
	}
	if opts.tracePath != "" && rec == nil {
		if rec, err = traceAgain(opts, l, res); err != nil {
			return err
		}
	}
	if rec != nil {
		if err := outdir.WriteFile(opts.tracePath, rec.WriteJSON); err != nil {
			return err
		}
	}
	if opts.benchJSON != "" {
		if err := outdir.WriteFile(opts.benchJSON, func(w io.Writer) error {
			return results.WriteBenchJSON(w, res.Records, res.ITL, sum, benchMeta(l, sum))
		}); err != nil {
			return err
		}
	}
	if opts.outDir != "" {
		if err := writeOutputs(opts.outDir, l, sum, res); err != nil {
			return err
		}
	}
	return incomplete(results.Unserved(res.Records, workloadName(l)))
}

// traceAgain simulates the run once more with a tracer on the requests
// --trace-select chooses from its records (the run is deterministic: the
// same run).
func traceAgain(opts *runOptions, l *scenarios.Loaded, res *sim.Result) (*journey.Recorder, error) {
	ids, err := opts.selection.pick(res.Records, opts.traceRequests, res.SimTimeNs)
	if err != nil {
		return nil, err
	}
	var rec *journey.Recorder
	_, _, err = opts.simulate.Or(os.Stderr)(l, experiment.WithTimeline, func(cfg *sim.Config) {
		rec = journey.AttachSelected(cfg, func(id int64) bool { return ids[id] })
	})
	return rec, err
}

// checkOutputs checks -o and --trace before anything is simulated.
func (o *runOptions) checkOutputs() error {
	if o.outDir != "" {
		if err := outdir.CheckDir("-o", o.outDir); err != nil {
			return err
		}
	}
	if o.tracePath != "" {
		if err := outdir.CheckFile("--trace", o.tracePath); err != nil {
			return err
		}
	}
	if o.benchJSON != "" {
		return outdir.CheckFile("--bench-json", o.benchJSON)
	}
	return nil
}

// benchMeta is what a vLLM result names of the run: the scenario, the
// model, and the rate offered ("inf" for a closed loop, as vLLM's
// --request-rate inf with --max-concurrency).
func benchMeta(l *scenarios.Loaded, sum results.Summary) results.BenchMeta {
	m := results.BenchMeta{Label: l.Name, Model: l.Model, RequestRate: sum.Throughput.OfferedPerS}
	if c := l.Workload.Client.Concurrency; c > 0 {
		m.RequestRate, m.MaxConcurrency = math.Inf(1), c
	}
	return m
}

// workloadName names the request source in errors (experiment.WorkloadName).
func workloadName(l *scenarios.Loaded) string { return experiment.WorkloadName(l) }

// writeOutputs writes summary.json, requests.csv, the effective scenario,
// the timeline and, when the run has a network, links.csv into dir.
func writeOutputs(dir string, l *scenarios.Loaded, sum results.Summary, res *sim.Result) error {
	if err := outdir.MakeDir(dir); err != nil {
		return err
	}
	eff, err := l.Effective(dir)
	if err != nil {
		return err
	}
	writers := []struct {
		name  string
		write func(io.Writer) error
	}{
		{results.SummaryFile, func(w io.Writer) error { return results.WriteJSON(w, sum) }},
		{results.RequestsFile, func(w io.Writer) error {
			return results.WriteRequestsCSV(w, res.Records, instanceNames(res), len(res.Tiers) > 0)
		}},
		{results.ScenarioFile, func(w io.Writer) error { _, err := w.Write(eff); return err }},
		{results.TimelineFile, func(w io.Writer) error { return experiment.WriteTimelineCSV(w, res.Timelines, len(res.Tiers) > 0) }},
	}
	if len(res.Links) > 0 {
		writers = append(writers, struct {
			name  string
			write func(io.Writer) error
		}{results.LinksFile, func(w io.Writer) error { return experiment.WriteLinksCSV(w, res.Links, res.SimTimeNs) }})
	}
	for _, wr := range writers {
		if err := outdir.WriteIn(dir, wr.name, wr.write); err != nil {
			return err
		}
	}
	return nil
}
