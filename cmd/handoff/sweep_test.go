package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"handoff/results"
	"handoff/results/sweepdir"
)

// tinySweep is a 6-point sweep of a 50-request quickstart, without plots.
var tinySweep = []string{"--no-plots", "--set", "workload.synthetic.requests=50",
	"--vary", "pools.decode.count=1,2", "--vary", "workload.rate_scale=0.5,1,2"}

// sweepCLI runs `handoff sweep quickstart -o dir` with extra args and
// fails the test unless it exits 0.
func sweepCLI(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{"sweep", quickstart, "-o", dir}, extra...)
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("handoff %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// countFinished counts the points with a point.json (written last) under dir.
func countFinished(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, results.PointsDir, "*", results.PointRecordFile))
	return len(m)
}

func TestSweepFlags(t *testing.T) {
	var got *sweepOptions
	capture := func(_ context.Context, o *sweepOptions, _, _ io.Writer) error { got = o; return nil }
	cmd := newSweepCmd(io.Discard, io.Discard, capture)
	cmd.SetArgs([]string{"s.yaml", "-o", "d", "--vary", "a=1,2", "--vary", "b=x", "--set", "c=3", "--shard", "1/4", "--progress"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.scenario != "s.yaml" || got.outDir != "d" || len(got.vary) != 2 || got.vary[1] != "b=x" ||
		len(got.sets) != 1 || got.shard != "1/4" || !got.progress || got.jobs != runtime.NumCPU() {
		t.Errorf("options %+v", got)
	}
	cmd = newSweepCmd(io.Discard, io.Discard, capture)
	cmd.SetArgs([]string{"s.yaml"})
	cmd.SetErr(io.Discard)
	cmd.SetOut(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `"out" not set`) {
		t.Errorf("no -o: error %v", err)
	}
}

// TestSweepOutputs checks the directory layout, the table's columns and
// row order, and that -j does not change a byte of results.csv.
func TestSweepOutputs(t *testing.T) {
	one, four := filepath.Join(t.TempDir(), "j1"), filepath.Join(t.TempDir(), "j4")
	out := sweepCLI(t, one, append([]string{"-j", "1"}, tinySweep[1:]...)...) // with plots
	if !strings.Contains(out, "6 points (6 ran, 0 already done)") {
		t.Errorf("stdout %q", out)
	}
	sweepCLI(t, four, append([]string{"-j", "4"}, tinySweep...)...)
	csv := readFile(t, filepath.Join(one, results.SweepResultsFile))
	if !bytes.Equal(csv, readFile(t, filepath.Join(four, results.SweepResultsFile))) {
		t.Fatal("results.csv differs between -j 1 and -j 4")
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	header := strings.Split(lines[0], ",")
	wantHead := []string{"id", "pools.decode.count", "workload.rate_scale", "requests_total"}
	if len(lines) != 7 || strings.Join(header[:4], ",") != strings.Join(wantHead, ",") ||
		header[len(header)-1] != "sim_time_s" || len(header) != len(sweepdir.Header(wantHead[1:3])) {
		t.Errorf("results.csv header %q, %d lines", header, len(lines))
	}
	wantRows := []string{"0000-", "0001-", "0002-", "0003-", "0004-", "0005-"}
	wantVals := []string{",1,0.5,50,", ",1,1,50,", ",1,2,50,", ",2,0.5,50,", ",2,1,50,", ",2,2,50,"}
	for i, row := range lines[1:] {
		if !strings.HasPrefix(row, wantRows[i]) || !strings.Contains(row, wantVals[i]) {
			t.Errorf("row %d = %q, want %s…%s", i, row, wantRows[i], wantVals[i])
		}
	}
	for _, plot := range []string{"attainment.png", "request_goodput.svg", "attribution.png"} {
		if _, err := os.Stat(filepath.Join(one, "plots", plot)); err != nil {
			t.Errorf("plot missing: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(four, "plots")); err == nil {
		t.Error("--no-plots drew plots")
	}
	id := strings.Split(lines[4], ",")[0]
	for _, f := range []string{"point.json", "scenario.yaml", "summary.json"} {
		if _, err := os.Stat(filepath.Join(one, results.PointsDir, id, f)); err != nil {
			t.Error(err)
		}
	}
	eff := string(readFile(t, filepath.Join(one, results.PointsDir, id, "scenario.yaml")))
	if strings.Contains(eff, "sweep") || !strings.Contains(eff, "count: 2") || !strings.Contains(eff, "rate_scale: 0.5") {
		t.Errorf("point %s's scenario.yaml does not hold its overrides without the sweep block:\n%s", id, eff)
	}
}

// TestSweepResumeAfterPartialRun leaves a directory as a killed run does
// (points without point.json, temporary files, no results.csv), reruns
// and checks that only the missing points run and results.csv is the same.
func TestSweepResumeAfterPartialRun(t *testing.T) {
	ref, dir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "out")
	sweepCLI(t, ref, tinySweep...)
	sweepCLI(t, dir, tinySweep...)
	kept := filepath.Join(dir, results.PointsDir, "0000-*", results.SummaryFile)
	keptPath, _ := filepath.Glob(kept)
	before := readFile(t, keptPath[0])
	os.Remove(filepath.Join(dir, results.SweepResultsFile))
	for _, p := range []string{"0001-*", "0004-*"} {
		m, _ := filepath.Glob(filepath.Join(dir, results.PointsDir, p))
		os.Remove(filepath.Join(m[0], results.PointRecordFile))
		os.WriteFile(filepath.Join(m[0], ".summary.json.123.tmp"), []byte(`{"half`), 0o644)
	}
	out := sweepCLI(t, dir, tinySweep...)
	if !strings.Contains(out, "(2 ran, 4 already done)") {
		t.Errorf("stdout %q, want 2 ran", out)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, results.SweepResultsFile)), readFile(t, filepath.Join(ref, results.SweepResultsFile))) {
		t.Error("resumed results.csv differs from an uninterrupted run's")
	}
	if !bytes.Equal(before, readFile(t, keptPath[0])) {
		t.Error("a finished point was run again") // its wall_time_s would differ
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, results.PointsDir, "*", ".*.tmp")); len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}

// TestSweepInterrupted cancels a sweep (as Ctrl-C does) once two points
// are saved, then resumes it.
func TestSweepInterrupted(t *testing.T) {
	ref, dir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "out")
	args := []string{"--no-plots", "--set", "workload.synthetic.requests=200", "--vary", "pools.decode.count=1,2,3", "--vary", "workload.rate_scale=1,2"}
	sweepCLI(t, ref, args...)
	opts := &sweepOptions{scenario: quickstart, outDir: dir, sets: args[2:3], vary: []string{args[4], args[6]}, jobs: 1, noPlots: true}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for countFinished(dir) < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	err := runSweep(ctx, opts, io.Discard, io.Discard)
	cancel()
	n := countFinished(dir)
	t.Logf("interrupted after %d of 6 points: %v", n, err)
	if n < 6 && (err == nil || !strings.Contains(err.Error(), "sweep interrupted") || !strings.Contains(err.Error(), "rerun")) {
		t.Errorf("error %v, want one saying the sweep was interrupted and how to resume", err)
	}
	if _, err := os.Stat(filepath.Join(dir, results.SweepResultsFile)); n < 6 && err == nil {
		t.Error("an interrupted sweep wrote results.csv")
	}
	if err := runSweep(context.Background(), opts, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, results.SweepResultsFile)), readFile(t, filepath.Join(ref, results.SweepResultsFile))) {
		t.Error("resumed results.csv differs from an uninterrupted run's")
	}
}

// TestSweepProgress: the line counts the points found finished, and its
// last frame shows them all done.
func TestSweepProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newSweepProgress(&buf, true, 5, 1)
	p.step()
	if got := lastFrame(buf.String()); got != "sweep: 2/5 points  25% |█████               |" {
		t.Errorf("after one point: %q", got)
	}
	for range 3 {
		p.step()
	}
	p.finish()
	if got := lastFrame(buf.String()); got != "sweep: 5/5 points 100% |████████████████████|" || !strings.HasSuffix(buf.String(), "\n") {
		t.Errorf("at the end: %q in %q", got, buf.String())
	}
	var none *sweepProgress = newSweepProgress(&buf, false, 5, 0)
	none.step()
	none.finish()
}

// TestSweepConcurrencyAxis sweeps a closed loop's concurrency: each point
// runs its users, results.csv has the per-GPU and interactivity columns,
// and the throughput-interactivity plot is drawn.
func TestSweepConcurrencyAxis(t *testing.T) {
	dir := t.TempDir()
	sweepCLI(t, dir, "--set", "workload.synthetic.requests=40",
		"--vary", "workload.client.concurrency=1,8", "--vary", "pools.decode.count=1,2")
	csv := readFile(t, filepath.Join(dir, results.SweepResultsFile))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	header := strings.Split(lines[0], ",")
	perGPU, inter := slices.Index(header, "output_tokens_per_s_per_gpu"), slices.Index(header, "interactivity_tokens_per_s_per_user")
	if len(lines) != 5 || header[1] != "workload.client.concurrency" || perGPU < 0 || inter < 0 {
		t.Fatalf("results.csv header %q, %d lines", header, len(lines))
	}
	figures := map[string][2]float64{}
	for _, row := range lines[1:] {
		f := strings.Split(row, ",")
		g, _ := strconv.ParseFloat(f[perGPU], 64)
		i, _ := strconv.ParseFloat(f[inter], 64)
		figures[f[1]+"/"+f[2]] = [2]float64{g, i}
	}
	for _, count := range []string{"1", "2"} {
		one, eight := figures["1/"+count], figures["8/"+count]
		if !(eight[0] > one[0] && eight[1] < one[1] && one[1] > 0) {
			t.Errorf("decode count %s: 8 users (%v) should give more tok/s/GPU and fewer tok/s/user than 1 (%v)", count, eight, one)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "throughput_interactivity.png")); err != nil {
		t.Errorf("plot missing: %v", err)
	}
}
