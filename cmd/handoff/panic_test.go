package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/sim"
)

// panicking returns a simulateFunc that panics with "injected" on the
// scenarios bad picks and simulates the others.
func panicking(bad func(*scenarios.Loaded) bool) simulateFunc {
	return func(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
		if bad(l) {
			var m map[string]int
			m["injected"]++ // a nil-map write: a runtime panic, as a real bug would raise
		}
		return simulate(l, configure...)
	}
}

// always is a scenario picker that picks every scenario.
func always(*scenarios.Loaded) bool { return true }

// checkInternal checks that err is one internal error naming the run, where
// it panicked, and how to replay it: with replayArgs.
func checkInternal(t *testing.T, err error, replayArgs string) {
	t.Helper()
	var ie *experiment.InternalError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v, want an internal error", err)
	}
	msg := err.Error()
	for _, want := range []string{"internal error: assignment to entry in nil map at ", ".panicking.func", "(panic_test.go:",
		"a simulator bug; replay with: handoff run " + replayArgs} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q\nlacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
}

func TestRunPanicIsError(t *testing.T) {
	opts := &runOptions{scenario: quickstart, sets: []string{"workload.synthetic.requests=20"}, seed: 7,
		traceRequests: 1, simulate: panicking(always)}
	err := runScenario(opts, io.Discard)
	checkInternal(t, err, quickstart+" --seed 7 --set workload.synthetic.requests=20")
	if exitCode(err) != exitError {
		t.Errorf("exit %d, want 1", exitCode(err))
	}
	if !strings.HasPrefix(err.Error(), quickstart+" (seed 7, --set workload.synthetic.requests=20): internal error: ") {
		t.Errorf("error %q does not start by naming the run", err)
	}
}

func TestGoodputPanicNamesRate(t *testing.T) {
	opts := &goodputOptions{scenario: quickstart, sets: []string{"workload.synthetic.requests=20"}, tolerance: 0.5,
		maxRuns: 5, simulate: panicking(func(l *scenarios.Loaded) bool { return l.Workload.RateScale > 1.5 })}
	checkInternal(t, runGoodput(opts, io.Discard),
		quickstart+" --seed 1 --set workload.synthetic.requests=20 --set workload.rate_scale=2")
}

func TestPlanPanicNamesFleet(t *testing.T) {
	opts := &planOptions{scenario: quickstart, sets: []string{"workload.synthetic.requests=20"}, targetRate: 5,
		maxCount: 2, maxRuns: 10, simulate: panicking(func(l *scenarios.Loaded) bool { return l.Pools[1].Count == 2 })}
	checkInternal(t, runPlan(opts, io.Discard), quickstart+" --seed 1 --set workload.synthetic.requests=20 "+
		"--set workload.rate_scale=")
	err := runPlan(opts, io.Discard)
	if !strings.Contains(err.Error(), "--set pools.decode.count=2 --set pools.decode.hardware=h100-sxm --set pools.decode.tp=1") {
		t.Errorf("error %q does not name the fleet", err)
	}
}

func TestCalibratePanicNamesExperiment(t *testing.T) {
	opts := &calibrateOptions{dir: "../../scenarios/calibration",
		simulate: panicking(func(l *scenarios.Loaded) bool { return strings.Contains(l.Name, "mixtral") })}
	checkInternal(t, runCalibrate(opts, io.Discard), "../../scenarios/calibration/calib-mixtral-8x7b-tp2-")
}

// TestSweepPanicKeepsGoing makes one point of six panic in its goroutine:
// the other five finish and are saved, the error names the point and how
// to replay it, and the exit status is 2; the replay command reproduces
// that point's summary; a rerun runs only that point. With --fail-fast the
// sweep stops, exit 1.
func TestSweepPanicKeepsGoing(t *testing.T) {
	ref, dir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "out")
	sweepCLI(t, ref, tinySweep...)
	bad := func(l *scenarios.Loaded) bool { return l.Pools[1].Count == 2 && l.Workload.RateScale == 1 }
	opts := &sweepOptions{scenario: quickstart, outDir: dir, sets: tinySweep[2:3], vary: []string{tinySweep[4], tinySweep[6]},
		jobs: 3, noPlots: true, simulate: panicking(bad)}
	var stdout bytes.Buffer
	err := runSweep(context.Background(), opts, &stdout, io.Discard)
	if exitCode(err) != exitIncomplete || countFinished(dir) != 5 {
		t.Fatalf("error %v (exit %d) with %d points saved; want exit 2 and 5 saved", err, exitCode(err), countFinished(dir))
	}
	replayArgs := quickstart + " --seed 1 --set workload.synthetic.requests=50 --set pools.decode.count=2 --set workload.rate_scale=1"
	checkInternal(t, err, replayArgs)
	if !strings.Contains(err.Error(), "1 of 6 points failed (results.csv holds the 5 others; ") ||
		!strings.Contains(err.Error(), "the first: sweep point 0004-") ||
		!strings.Contains(stdout.String(), "6 ran, 1 of them failed, 0 already done") {
		t.Errorf("error %q\nstdout %q", err, stdout.String())
	}
	if rows := strings.Count(string(readFile(t, filepath.Join(dir, results.SweepResultsFile))), "\n"); rows != 6 {
		t.Errorf("results.csv has %d lines, want the header and 5 rows", rows)
	}

	out := t.TempDir()
	if code, _, stderr := runCLI(t, append(append([]string{"run"}, strings.Fields(replayArgs)...), "-o", out)...); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	m, _ := filepath.Glob(filepath.Join(ref, results.PointsDir, "0004-*", results.SummaryFile))
	want := wallTime.ReplaceAll(readFile(t, m[0]), nil)
	if got := wallTime.ReplaceAll(readFile(t, filepath.Join(out, "summary.json")), nil); !bytes.Equal(got, want) {
		t.Error("the replay command's summary differs from the point's in an unbroken sweep")
	}

	opts.simulate = nil
	stdout.Reset()
	if err := runSweep(context.Background(), opts, &stdout, io.Discard); err != nil || !strings.Contains(stdout.String(), "(1 ran, 5 already done)") {
		t.Fatalf("rerun: %v, stdout %q", err, stdout.String())
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, results.SweepResultsFile)), readFile(t, filepath.Join(ref, results.SweepResultsFile))) {
		t.Error("results.csv after the rerun differs from an unbroken sweep's")
	}

	opts.outDir, opts.failFast, opts.simulate = filepath.Join(t.TempDir(), "ff"), true, panicking(always)
	err = runSweep(context.Background(), opts, io.Discard, io.Discard)
	if exitCode(err) != exitError || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("--fail-fast: error %v (exit %d), want an internal error, exit 1", err, exitCode(err))
	}
}

// TestExecuteRecovers: a panic that no command recovered is still one
// line on stderr and exit 1.
func TestExecuteRecovers(t *testing.T) {
	cmd := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true,
		RunE: func(*cobra.Command, []string) error { panic("boom") }}
	cmd.SetArgs(nil)
	var stderr bytes.Buffer
	code := execute(cmd, &stderr)
	if code != exitError || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.HasPrefix(stderr.String(), "handoff: internal error: boom at ") ||
		!strings.Contains(stderr.String(), "TestExecuteRecovers.func1 (panic_test.go:") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"pools.decode.count=2": "pools.decode.count=2",
		"a=[{d: 1s}]":          "'a=[{d: 1s}]'",
		"it's":                 `'it'\''s'`,
		"":                     "''",
	} {
		if got := experiment.ShellQuote(in); got != want {
			t.Errorf("experiment.ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// oneRun is a test-only panic hook: it panics in the run whose effective
// scenario (plan and sweep blocks aside) is the first that pick chose,
// wherever that scenario comes from — a search's probe, a sweep's point or
// a replay — and simulates every other.
type oneRun struct {
	pick   func(*scenarios.Loaded) bool
	target []byte // the chosen run's effective scenario; nil until chosen
}

func (o *oneRun) bad(l *scenarios.Loaded) bool {
	c := *l
	c.Plan, c.Sweep = nil, nil
	eff, err := c.Effective("")
	if err != nil {
		panic(err)
	}
	if o.target == nil && o.pick(l) {
		o.target = eff
	}
	return o.target != nil && bytes.Equal(eff, o.target)
}

// replayArgs splits a replay command, "handoff run ARGS...", into its
// arguments; the runs here need no shell quoting.
func replayArgs(t *testing.T, msg string) []string {
	t.Helper()
	_, cmd, ok := strings.Cut(msg, "replay with: ")
	if !ok || strings.ContainsAny(cmd, `'"\`) || !strings.HasPrefix(cmd, "handoff run ") {
		t.Fatalf("no replay command to split in %q", msg)
	}
	return strings.Fields(strings.TrimPrefix(cmd, "handoff run "))
}

// TestReplayReproducesInternalError: for goodput, plan and sweep, the
// replay command an internal error prints, run as printed, loads the very
// scenario that failed and fails with the same internal error.
func TestReplayReproducesInternalError(t *testing.T) {
	small := "workload.synthetic.requests=20"
	for _, tc := range []struct {
		name string
		pick func(*scenarios.Loaded) bool
		run  func(simulateFunc) error
	}{
		{"goodput", func(l *scenarios.Loaded) bool { return l.Workload.RateScale > 1.5 }, func(s simulateFunc) error {
			return runGoodput(&goodputOptions{scenario: quickstart, sets: []string{small}, tolerance: 0.5, maxRuns: 5,
				simulate: s}, io.Discard)
		}},
		{"plan", func(l *scenarios.Loaded) bool { return l.Pools[1].Count == 2 }, func(s simulateFunc) error {
			return runPlan(&planOptions{scenario: quickstart, sets: []string{small}, targetRate: 5, maxCount: 2, maxRuns: 10,
				simulate: s}, io.Discard)
		}},
		{"sweep", func(l *scenarios.Loaded) bool { return l.Pools[1].Count == 2 && l.Workload.RateScale == 2 }, func(s simulateFunc) error {
			opts := &sweepOptions{scenario: quickstart, outDir: filepath.Join(t.TempDir(), "out"), sets: []string{small},
				vary: []string{"pools.decode.count=1,2", "workload.rate_scale=1,2"}, jobs: 1, noPlots: true, failFast: true, simulate: s}
			return runSweep(context.Background(), opts, io.Discard, io.Discard)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := &oneRun{pick: tc.pick}
			simF := panicking(hook.bad)
			var first *experiment.InternalError
			if err := tc.run(simF); !errors.As(err, &first) {
				t.Fatalf("error %v, want an internal error", err)
			}
			args := replayArgs(t, first.Error())
			cmd := newRunCmd(io.Discard, io.Discard, func(o *runOptions, w io.Writer) error {
				o.simulate = simF
				return runScenario(o, w)
			})
			cmd.SetArgs(args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			var again *experiment.InternalError
			if err := cmd.Execute(); !errors.As(err, &again) {
				t.Fatalf("handoff run %s: error %v, want the internal error %q", strings.Join(args, " "), err, first)
			}
			if again.Error() != first.Error() {
				t.Errorf("the replay failed otherwise:\n%s\nthe %s:\n%s", again, tc.name, first)
			}
		})
	}
}
