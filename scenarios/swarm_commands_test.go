package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/experiment/capacity"
	"handoff/scenarios/experiment/sweeprun"
	"handoff/sim"
)

// swarmCommand is one command a swarm case takes its file through after
// run: it runs the command's library entry point on the file with a tiny
// budget and returns "ran" or "refused"; anything else fails the test.
type swarmCommand struct {
	name string
	run  func(t *testing.T, file string, rateRPS float64) string
}

// swarmCommands are the commands besides run; each case takes one.
var swarmCommands = []swarmCommand{
	{"run", swarmRunDir},
	{"sweep", swarmSweep},
	{"goodput", swarmGoodput},
	{"plan", swarmPlan},
}

// swarmRunDir runs the file as `handoff run -o DIR` does — its timeline
// sampled, its requests.csv streamed into the directory — or, for half the
// seeds, keeping every record and writing vLLM's bench JSON too.
func swarmRunDir(t *testing.T, file string, _ float64) string {
	l, err := scenarios.Load(file)
	if err != nil {
		return refused(t, "run", err)
	}
	d, err := experiment.CreateRunDir(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	keep := l.Seed%2 == 0
	configure := []func(*sim.Config){experiment.WithTimeline}
	if keep {
		configure = append(configure, experiment.KeepRecords)
	}
	sum, res, err := checkedSimulate(t)(l, append(configure, d.Attach)...)
	if err != nil {
		return refused(t, "run", err)
	}
	run := &experiment.Finished{Loaded: l, Summary: sum, Result: res}
	if err := d.Write(run); err != nil {
		t.Errorf("run -o: %v", err)
	}
	if keep {
		if err := experiment.WriteBenchJSON(filepath.Join(t.TempDir(), "bench.json"), "20250101-000000", run); err != nil {
			t.Errorf("run --bench-json: %v", err)
		}
	}
	return "ran"
}

// swarmSweep runs the file's sweep block, or (without one) two seeds, on
// one job into a fresh directory, every point run even after one fails.
func swarmSweep(t *testing.T, file string, _ float64) string {
	opts := sweeprun.Options{Scenario: file, Dir: filepath.Join(t.TempDir(), "sweep"), Jobs: 1, KeepGoing: true,
		NoPlots: true, Simulate: checkedSimulate(t)}
	if l, err := scenarios.Load(file); err == nil && l.Sweep == nil {
		opts.Vary = []string{"seed=5,6"}
	}
	res, err := sweeprun.Run(context.Background(), opts)
	if err != nil {
		return refused(t, "sweep", err)
	}
	for _, e := range res.Failures {
		refused(t, "a sweep point", e)
	}
	return "ran"
}

// swarmGoodput searches the goodput with two runs per search.
func swarmGoodput(t *testing.T, file string, _ float64) string {
	_, err := capacity.Goodput(capacity.GoodputOptions{Scenario: file, Tolerance: 0.5, MaxRuns: 2,
		Simulate: checkedSimulate(t)})
	if err != nil {
		return refused(t, "goodput", err)
	}
	return "ran"
}

// swarmPlan plans a fleet for the workload's own rate, over the plan block
// or counts of one and two, with three fleets at most.
func swarmPlan(t *testing.T, file string, rateRPS float64) string {
	p, err := capacity.Plan(capacity.PlanOptions{Scenario: file, TargetRate: rateRPS, MaxCount: 2, MaxRuns: 3,
		Simulate: checkedSimulate(t)})
	if err != nil {
		return refused(t, "plan", err)
	}
	_ = p.SearchErr() // out of runs: expected on a budget of three
	return "ran"
}

// refused fails the test unless err is a clean refusal: one line, no
// internal error (a panic recovered), and not the simulator's own check
// of a configuration the scenario layer should have refused ("sim: ...").
func refused(t *testing.T, what string, err error) string {
	t.Helper()
	var ie *experiment.InternalError
	msg := err.Error()
	switch {
	case errors.As(err, &ie):
		t.Errorf("%s: %v", what, err)
	case strings.Contains(msg, "\n") || msg == "":
		t.Errorf("%s: an error not on one line: %q", what, msg)
	case strings.Contains(msg, "sim: "):
		t.Errorf("%s: the simulator refused what the scenario let through: %v", what, err)
	default:
		t.Logf("%s refused: %v", what, err)
	}
	return "refused"
}

// checkedSimulate is experiment.Run with each run's records checked —
// as they stream, or once the run has kept them: every request ends once,
// in order, with a reason unless it completed.
func checkedSimulate(t *testing.T) experiment.Simulate {
	return func(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
		c := &recordCheck{}
		configure = append(configure, func(cfg *sim.Config) {
			if reflect.TypeOf(cfg.Records) != keepType {
				c.next, cfg.Records = cfg.Records, c
			}
		})
		sum, res, err := experiment.Run(l, nil, configure...)
		if err == nil {
			for i := range res.Records {
				c.Record(&res.Records[i])
			}
			if c.fault == "" && c.n != int64(res.Requests) {
				c.fault = fmt.Sprintf("%d of %d requests ended", c.n, res.Requests)
			}
		}
		if c.fault != "" {
			t.Errorf("%s: %s", l.File, c.fault)
		}
		return sum, res, err
	}
}

// keepType is the type of the sink experiment.KeepRecords sets, which
// asks the run to keep its records rather than hand them to a sink.
var keepType = func() reflect.Type {
	var cfg sim.Config
	experiment.KeepRecords(&cfg)
	return reflect.TypeOf(cfg.Records)
}()

// recordCheck is a record sink that notes the first record out of order
// or inconsistent, and hands each on to next (may be nil).
type recordCheck struct {
	mu    sync.Mutex // sweep points may run on several goroutines
	n     int64
	fault string
	next  sim.RecordSink
}

func (c *recordCheck) Record(r *results.Record) {
	c.mu.Lock()
	if msg := recordFault(r, c.n); msg != "" && c.fault == "" {
		c.fault = fmt.Sprintf("request %d %s: %+v", r.ID, msg, *r)
	}
	c.n++
	c.mu.Unlock()
	if c.next != nil {
		c.next.Record(r)
	}
}
