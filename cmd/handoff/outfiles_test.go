package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
	"handoff/scenarios"
	"handoff/sim"
)

// noSimulation is a simulateFunc for runs that must fail before they
// simulate.
func noSimulation(t *testing.T) simulateFunc {
	return func(*scenarios.Loaded, ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
		t.Error("simulated before the output path was checked")
		return results.Summary{}, nil, context.Canceled
	}
}

// TestOutputPathsCheckedFirst gives every command that writes files an
// output path it cannot use and checks it fails with one message naming
// the flag, before anything is simulated.
func TestOutputPathsCheckedFirst(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	write(t, root, "file", "not a folder")
	missing := filepath.Join(root, "no", "such", "x.json")
	sets := []string{"workload.synthetic.requests=20"}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"run --trace in a missing folder", func() error {
			return runScenario(&runOptions{scenario: quickstart, sets: sets, tracePath: missing, traceRequests: 1,
				simulate: noSimulation(t)}, io.Discard)
		}, "--trace " + missing + ": no directory " + filepath.Dir(missing)},
		{"run --trace onto a folder", func() error {
			return runScenario(&runOptions{scenario: quickstart, tracePath: root, traceRequests: 1, simulate: noSimulation(t)}, io.Discard)
		}, "--trace " + root + ": is a directory"},
		{"run -o a file", func() error {
			return runScenario(&runOptions{scenario: quickstart, outDir: file, traceRequests: 1, simulate: noSimulation(t)}, io.Discard)
		}, "-o " + file + ": not a directory"},
		{"run -o under a file", func() error {
			return runScenario(&runOptions{scenario: quickstart, outDir: filepath.Join(file, "out"), traceRequests: 1,
				simulate: noSimulation(t)}, io.Discard)
		}, file + " is not a directory"},
		{"sweep -o a file", func() error {
			return runSweep(context.Background(), &sweepOptions{scenario: quickstart, outDir: file, sets: sets,
				vary: []string{"pools.decode.count=1,2"}, jobs: 1, simulate: noSimulation(t)}, io.Discard, io.Discard)
		}, "-o " + file + ": not a directory"},
		{"merge -o a file", func() error {
			return runMerge(&mergeOptions{dirs: []string{root}, outDir: file}, io.Discard)
		}, "-o " + file + ": not a directory"},
		{"goodput -o a file", func() error {
			return runGoodput(&goodputOptions{scenario: quickstart, outDir: file, sets: sets, tolerance: 0.5, maxRuns: 3,
				simulate: noSimulation(t)}, io.Discard)
		}, "-o " + file + ": not a directory"},
		{"plan -o a file", func() error {
			return runPlan(&planOptions{scenario: quickstart, outDir: file, sets: sets, targetRate: 5, maxCount: 1, maxRuns: 3,
				simulate: noSimulation(t)}, io.Discard)
		}, "-o " + file + ": not a directory"},
		{"calibrate -o in a missing folder", func() error {
			return runCalibrate(&calibrateOptions{dir: "../../scenarios/calibration", out: missing, simulate: noSimulation(t)}, io.Discard)
		}, "-o " + missing + ": no directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	code, _, stderr := runCLI(t, "plot", file)
	if code != exitError || strings.Count(stderr, "\n") != 1 {
		t.Errorf("plot of a file: exit %d, stderr %q", code, stderr)
	}
}

// plantLink makes dir/name a symbolic link to target.
func plantLink(t *testing.T, target, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// TestOutputsStayInside plants symbolic links in output folders, to a
// file and to a folder outside them, and checks that no command writes
// through them: a link with an output's name is replaced by the file, a
// link on the way to one is refused.
func TestOutputsStayInside(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "keep", "precious")
	keep := filepath.Join(outside, "keep")
	dir := filepath.Join(t.TempDir(), "run")
	plantLink(t, keep, dir, "summary.json")
	trace := filepath.Join(t.TempDir(), "journey.json")
	plantLink(t, keep, filepath.Dir(trace), "journey.json")
	if code, _, stderr := runCLI(t, "run", quickstart, "-o", dir, "--trace", trace, "--set", "workload.synthetic.requests=20"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	for _, p := range []string{filepath.Join(dir, "summary.json"), trace} {
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a regular file after the run: %v", p, err)
		}
	}

	plantLink(t, outside, dir, "plots")
	code, _, stderr := runCLI(t, "plot", dir)
	if code != exitError || !strings.Contains(stderr, "plots") {
		t.Errorf("plot through a link out of the folder: exit %d, stderr %q", code, stderr)
	}

	gp := filepath.Join(t.TempDir(), "goodput")
	plantLink(t, keep, gp, "goodput.csv")
	plantLink(t, outside, gp, "plots")
	code, _, stderr = runCLI(t, "goodput", quickstart, "-o", gp, "--tolerance", "0.5", "--set", "workload.synthetic.requests=20")
	if code != exitError || !strings.Contains(stderr, filepath.Join(gp, "plots")) {
		t.Errorf("goodput through a link out of the folder: exit %d, stderr %q", code, stderr)
	}

	sw := filepath.Join(t.TempDir(), "sweep")
	sweepCLI(t, sw, tinySweep...)
	m, _ := filepath.Glob(filepath.Join(sw, results.PointsDir, "0003-*"))
	os.RemoveAll(m[0])
	plantLink(t, outside, filepath.Dir(m[0]), filepath.Base(m[0]))
	code, _, stderr = runCLI(t, append([]string{"sweep", quickstart, "-o", sw}, tinySweep...)...)
	if code != exitIncomplete || !strings.Contains(stderr, "1 of 6 points failed") || !strings.Contains(stderr, "path escapes") {
		t.Errorf("sweep through a link out of the folder: exit %d, stderr %q", code, stderr)
	}

	if got := string(readFile(t, keep)); got != "precious" {
		t.Errorf("a file outside every output folder was overwritten: %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files were written outside every output folder: %v", entries)
	}
}

// TestRunRemovesStaleTemps: a run into a folder where a killed run left
// its requests.csv (and summary.json) half-written as temporaries
// removes them, and leaves every other file, even one named like the
// temporary of a file the run does not write.
func TestRunRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := []string{".requests.csv.Q2FKT6Y7MIER.tmp", ".summary.json.Q2FKT6Y7MIER.tmp"}
	kept := []string{".notes.txt.Q2FKT6Y7MIER.tmp", ".requests.csv.tmp", "notes.tmp"}
	for _, n := range append(stale, kept...) {
		write(t, dir, n, "half a file")
	}
	if code, _, stderr := runCLI(t, "run", quickstart, "-o", dir, "--set", "workload.synthetic.requests=20"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("the killed run's %s is still there", n)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s, not a temporary of a file the run writes, was removed: %v", n, err)
		}
	}
}

// TestRunWarnsLargeOutput: run -o warns, one line before it simulates,
// when requests.csv is projected above 100 MB, and says nothing below.
func TestRunWarnsLargeOutput(t *testing.T) {
	stop := func(l *scenarios.Loaded, configure ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
		b, err := l.Build()
		if err != nil {
			return results.Summary{}, nil, err
		}
		defer b.Close()
		for _, f := range configure {
			f(b.Config)
		}
		return results.Summary{}, nil, context.Canceled // no need to simulate a million requests
	}
	for _, tt := range []struct {
		requests string
		want     string
	}{
		{"1000000", "warning: %s will take about 240 MB (1000000 requests at about 240 bytes a row; handoff warns above 100 MB)\n"},
		{"400000", ""},
	} {
		dir := t.TempDir()
		var stderr strings.Builder
		opts := &runOptions{scenario: quickstart, outDir: dir, sets: []string{"workload.synthetic.requests=" + tt.requests},
			traceRequests: 1, stderr: &stderr, simulate: stop}
		if err := runScenario(opts, io.Discard); err != context.Canceled {
			t.Fatalf("%s requests: %v", tt.requests, err)
		}
		want := tt.want
		if want != "" {
			want = fmt.Sprintf(want, filepath.Join(dir, "requests.csv"))
		}
		if stderr.String() != want {
			t.Errorf("%s requests: stderr %q, want %q", tt.requests, stderr.String(), want)
		}
	}
}
