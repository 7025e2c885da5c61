package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"handoff/results"
	"handoff/results/outdir"
	"handoff/scenarios/experiment"
	"handoff/sim"
	"handoff/sim/journey"
	"handoff/sim/parallel"
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
	selection     experiment.TraceSelection
	benchJSON     string // --bench-json: a vllm bench serve result file, "" = none
	benchDate     string // --bench-date: its date, YYYYmmdd-HHMMSS
	metrics       string // --metrics: "openmetrics" writes DIR/metrics.om, "" = none
	progress      bool   // --progress: draw the progress line on stderr even when it is no terminal
	cores         int    // --cores: cores the run uses (sim/parallel); 0 = every core

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
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.scenario = args[0]
			if err := traceFlagsNeedTrace(cmd.Flags(), opts.tracePath); err != nil {
				return err
			}
			if err := checkBenchDate(opts.benchDate); err != nil {
				return err
			}
			if err := checkMetrics(opts.metrics, opts.outDir); err != nil {
				return err
			}
			var err error
			if opts.cores, err = parallel.Cores(opts.cores); err != nil {
				return err
			}
			parallel.Limit(opts.cores)
			if opts.traceRequests <= 0 {
				return fmt.Errorf("--trace-requests must be positive, got %d", opts.traceRequests)
			}
			if opts.selection, err = parseTraceSelect(opts.traceSelect, opts.traceRequests); err != nil {
				return err
			}
			return runF(opts, stdout)
		},
	}
	cmd.Flags().StringVarP(&opts.outDir, "out", "o", "",
		"write summary.json, requests.csv, scenario.yaml (the effective scenario), timeline.csv (KV use and batch per instance over time) and, with a network, links.csv (bytes and busy time per link), and when the fleet changes (autoscale, faults), fleet.csv (instances per pool over time) to `DIR`")
	scenarioFlags(cmd.Flags(), &opts.sets, &opts.seed)
	cmd.Flags().StringVar(&opts.tracePath, "trace", "",
		"write the journeys of the first requests as a Chrome/Perfetto trace to `FILE`")
	cmd.Flags().Int64Var(&opts.traceRequests, "trace-requests", defaultTraceRequests,
		"how many requests --trace follows (`N` > 0)")
	cmd.Flags().StringVar(&opts.traceSelect, "trace-select", "first", traceSelectHelp)
	cmd.Flags().StringVar(&opts.benchJSON, "bench-json", "",
		"also write the run to `FILE` as the result JSON that vllm bench serve --save-result --save-detailed writes, for dashboards that read those")
	cmd.Flags().StringVar(&opts.benchDate, "bench-date", defaultBenchDate,
		"the `DATE` --bench-json writes, YYYYmmdd-HHMMSS as vLLM writes it; the default is the fixed epoch the run starts at, so that the file is the same on every run")
	cmd.Flags().StringVar(&opts.metrics, "metrics", "",
		"also write vLLM's Prometheus metrics over the run, per instance, in `FORMAT` openmetrics, to DIR/metrics.om (needs -o)")
	cmd.Flags().IntVar(&opts.cores, "cores", 1,
		"run on `N` cores, 0 for every core: a colocated round_robin fleet runs as shards, an event loop each (at least N); any other fleet as one event loop with the workload read and the records written beside it; the outputs are the same byte for byte but the wall time and event count (docs/PARALLEL.md)")
	cmd.Flags().BoolVar(&opts.progress, "progress", false,
		"draw the progress line (simulated time, requests ended) on stderr even when it is not a terminal")
	return cmd
}

// defaultBenchDate is --bench-date's default: the epoch a run's simulated
// time starts at (2025-01-01T00:00:00Z, as in metrics.om), in vLLM's
// format.
const defaultBenchDate = "20250101-000000"

// checkBenchDate refuses a --bench-date not in vLLM's YYYYmmdd-HHMMSS.
func checkBenchDate(date string) error {
	if _, err := time.Parse("20060102-150405", date); err != nil {
		return fmt.Errorf("--bench-date %q: want YYYYmmdd-HHMMSS as vLLM writes it, e.g. %s", date, defaultBenchDate)
	}
	return nil
}

// checkMetrics refuses a --metrics format other than openmetrics, and
// --metrics without -o (the file goes in its folder).
func checkMetrics(format, outDir string) error {
	switch {
	case format == "":
		return nil
	case format != "openmetrics":
		return fmt.Errorf("--metrics %q: the one format is openmetrics", format)
	case outDir == "":
		return fmt.Errorf("--metrics writes %s in the folder -o names, and there is no -o: add -o DIR", results.MetricsFile)
	}
	return nil
}

// traceFlagsNeedTrace refuses --trace-requests and --trace-select
// without --trace: they choose what the trace holds, and a run without
// one would silently ignore them.
func traceFlagsNeedTrace(f *pflag.FlagSet, tracePath string) error {
	if tracePath != "" {
		return nil
	}
	for _, name := range []string{"trace-requests", "trace-select"} {
		if f.Changed(name) {
			return fmt.Errorf("--%s chooses the requests --trace follows, and there is no --trace: add --trace FILE, or drop --%s", name, name)
		}
	}
	return nil
}

// scenarioFlags adds the --set and (when seed is not nil) --seed flags that
// every command running a scenario shares.
func scenarioFlags(f *pflag.FlagSet, sets *[]string, seed *uint64) {
	f.StringArrayVar(sets, "set", nil, "override a scenario field, `path=value` (repeatable)")
	if seed != nil {
		f.Uint64Var(seed, "seed", 0, "override the scenario's seed")
	}
}

// runScenario simulates the scenario (experiment.Run), prints its summary
// and writes the output files (experiment.RunDir, whose requests.csv
// streams as the run goes; WriteBenchJSON; the journey trace). A panic becomes an error that says how to replay
// the run.
func runScenario(opts *runOptions, stdout io.Writer) (err error) {
	if err := opts.checkOutputs(); err != nil {
		return err
	}
	l, rp, err := experiment.LoadReplay(opts.scenario, opts.sets, opts.seed)
	if err != nil {
		return err
	}
	defer experiment.RecoverRun(&err, rp)
	var rec *journey.Recorder
	var configure []func(*sim.Config)
	if opts.tracePath != "" {
		configure = append(configure, opts.selection.Attach(&rec)...)
	}
	if opts.benchJSON != "" {
		configure = append(configure, experiment.KeepRecords) // its per-request lists
	}
	var dir *experiment.RunDir
	if opts.outDir != "" {
		if dir, err = experiment.CreateRunDir(opts.outDir); err != nil {
			return err
		}
		defer dir.Close()
		configure = append(configure, experiment.WithTimeline, dir.Attach, warnLargeOutput(opts.stderr, opts.outDir))
		if opts.metrics != "" {
			configure = append(configure, dir.AttachMetrics)
		}
	}
	line := &simProgress{w: opts.stderr, forced: opts.progress, label: "run"}
	configure = append(configure, line.attach)
	sum, res, err := opts.simulate.OnCores(os.Stderr, opts.cores)(l, configure...)
	line.finish() // before the table, which may go to the same terminal
	if err != nil {
		return err
	}
	run := &experiment.Finished{Loaded: l, Summary: sum, Result: res}
	if err := results.WriteTable(stdout, sum); err != nil {
		return err
	}
	if opts.tracePath != "" && rec == nil {
		if rec, err = opts.selection.Retrace(run, opts.simulate.Or(os.Stderr)); err != nil {
			return err
		}
	}
	if rec != nil {
		if err := outdir.WriteFile(opts.tracePath, rec.WriteJSON); err != nil {
			return err
		}
	}
	if opts.benchJSON != "" {
		if err := experiment.WriteBenchJSON(opts.benchJSON, opts.benchDate, run); err != nil {
			return err
		}
	}
	if dir != nil {
		if err := dir.Write(run); err != nil {
			return err
		}
	}
	return incomplete(run.Unserved())
}

// requestsRowBytes is about what one request's row of requests.csv
// takes: 236 bytes measured on scenarios/perf/reference.yaml (1,000,000
// requests), 240 on the quickstart, 248 with sessions and KV tiers.
const requestsRowBytes = 240

// largeRequestsBytes is the projected size of requests.csv above which
// run -o warns: see docs/COMMANDS.md (Output files) for why 100 MB.
const largeRequestsBytes = 100e6

// warnLargeOutput returns a configure function that warns on w (nil:
// nowhere), one line, when the run's requests.csv is projected above
// largeRequestsBytes: its request count (known to a sim.Counted source,
// a synthetic workload's requests) × requestsRowBytes.
func warnLargeOutput(w io.Writer, dir string) func(*sim.Config) {
	return func(cfg *sim.Config) {
		s, ok := cfg.Source.(sim.Counted)
		if w == nil || !ok {
			return
		}
		n := int64(s.MaxRequests())
		if size := float64(n * requestsRowBytes); size > largeRequestsBytes {
			fmt.Fprintf(w, "warning: %s will take about %.0f MB (%d requests at about %d bytes a row; "+
				"handoff warns above %.0f MB)\n", filepath.Join(dir, results.RequestsFile),
				size/1e6, n, requestsRowBytes, largeRequestsBytes/1e6)
		}
	}
}

// checkOutputs checks -o, --trace and --bench-json before anything is
// simulated; a file in -o's folder may name it before it exists, since
// the run creates it before it writes the file.
func (o *runOptions) checkOutputs() error {
	if o.outDir != "" {
		if err := outdir.CheckDir("-o", o.outDir); err != nil {
			return err
		}
	}
	if o.tracePath != "" {
		if err := outdir.CheckFileIn("--trace", o.tracePath, o.outDir); err != nil {
			return err
		}
	}
	if o.benchJSON != "" {
		return outdir.CheckFileIn("--bench-json", o.benchJSON, o.outDir)
	}
	return nil
}
