package main

import (
	"bytes"
	"handoff/results"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pointDir returns the folder of the point whose id starts with prefix.
func pointDir(t *testing.T, dir, prefix string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, results.PointsDir, prefix+"-*"))
	if len(m) != 1 {
		t.Fatalf("no point %s in %s", prefix, dir)
	}
	return m[0]
}

// TestSweepRerunsDamagedPoints damages saved points in four ways; a rerun
// names each, runs them again, keeps the sound ones and writes the
// results.csv of an unbroken sweep.
func TestSweepRerunsDamagedPoints(t *testing.T) {
	ref, dir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "out")
	sweepCLI(t, ref, tinySweep...)
	sweepCLI(t, dir, tinySweep...)
	summary := func(prefix string) string { return filepath.Join(pointDir(t, dir, prefix), results.SummaryFile) }
	os.WriteFile(summary("0000"), []byte("{}\n"), 0o644)
	data := readFile(t, summary("0001"))
	os.WriteFile(summary("0001"), data[:len(data)/2], 0o644)
	os.WriteFile(summary("0002"), bytes.Replace(data, []byte(`"total": 50`), []byte(`"total": 51`), 1), 0o644)
	os.Remove(summary("0003"))
	sound := readFile(t, summary("0005"))

	code, stdout, stderr := runCLI(t, append([]string{"sweep", quickstart, "-o", dir}, tinySweep...)...)
	if code != 0 || !strings.Contains(stdout, "(4 ran, 2 already done)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, want := range []string{"warning: sweep point 0000-", "summary.json is not the file saved with the point",
		"warning: sweep point 0001-", "warning: sweep point 0002-", "warning: sweep point 0003-", "; it runs again"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, results.SweepResultsFile)), readFile(t, filepath.Join(ref, results.SweepResultsFile))) {
		t.Error("results.csv after the rerun differs from an unbroken sweep's")
	}
	if !bytes.Equal(sound, readFile(t, summary("0005"))) {
		t.Error("a sound point was run again")
	}
}

// traceSweep copies the trace scenario of the scenarios tests into a
// folder of its own, with a second trace, and returns its path.
func traceSweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "scenarios", "testdata")
	write(t, dir, "trace.yaml", string(readFile(t, filepath.Join(src, "trace.yaml"))))
	os.Mkdir(filepath.Join(dir, "traces"), 0o755)
	trace := string(readFile(t, filepath.Join(src, "traces", "ok.csv")))
	write(t, filepath.Join(dir, "traces"), "ok.csv", trace)
	write(t, filepath.Join(dir, "traces"), "other.csv", trace)
	return filepath.Join(dir, "trace.yaml")
}

// TestSweepRefusesChangedInputs: a sweep whose inputs changed under its
// saved points refuses to resume, naming the file, whether the base
// scenario reads it or only some points do; nothing in the directory
// changes.
func TestSweepRefusesChangedInputs(t *testing.T) {
	scenario := traceSweep(t)
	traces := filepath.Join(filepath.Dir(scenario), "traces")
	args := []string{"--no-plots", "--vary", "workload.trace.path=traces/ok.csv,traces/other.csv", "--vary", "pools.decode.count=1,2"}
	dir := filepath.Join(t.TempDir(), "out")
	sweepArgs := append([]string{"sweep", scenario, "-o", dir}, args...)
	if code, _, stderr := runCLI(t, sweepArgs...); code != 0 {
		t.Fatal(stderr)
	}
	before := snapshot(t, dir)
	edit := func(name string) {
		f, err := os.OpenFile(filepath.Join(traces, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("2023-11-16 18:20:00.00,100,10\n")
		f.Close()
	}
	edit("other.csv") // read by points 0002 and 0003 only
	code, _, stderr := runCLI(t, sweepArgs...)
	if code != exitError || !strings.Contains(stderr, "will not mix results: point 0002-") ||
		!strings.Contains(stderr, "read "+filepath.Join(traces, "other.csv")+", which has changed since") {
		t.Errorf("after editing a point's trace: exit %d, stderr %q", code, stderr)
	}
	edit("ok.csv") // the base scenario's
	code, _, stderr = runCLI(t, sweepArgs...)
	if code != exitError || !strings.Contains(stderr, "were made from different inputs: the content of traces/ok.csv changed") {
		t.Errorf("after editing the base trace: exit %d, stderr %q", code, stderr)
	}
	after := snapshot(t, dir)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
}

// TestSweepShardsRefuseEachOther: shard 1/2 will not run in shard 0/2's
// folder, nor the whole sweep, and results.csv keeps shard 0's rows; merge
// joins them as before.
func TestSweepShardsRefuseEachOther(t *testing.T) {
	root := t.TempDir()
	s0 := filepath.Join(root, "s0")
	sweepCLI(t, s0, append([]string{"--shard", "0/2"}, tinySweep...)...)
	before := readFile(t, filepath.Join(s0, results.SweepResultsFile))
	for shard, want := range map[string]string{"1/2": "holds shard 0/2, this sweep shard 1/2", "": "holds shard 0/2, this sweep shard all"} {
		args := append([]string{"sweep", quickstart, "-o", s0}, tinySweep...)
		if shard != "" {
			args = append(args, "--shard", shard)
		}
		if code, _, stderr := runCLI(t, args...); code != exitError || !strings.Contains(stderr, want) {
			t.Errorf("--shard %q into shard 0/2's folder: exit %d, stderr %q", shard, code, stderr)
		}
	}
	if !bytes.Equal(before, readFile(t, filepath.Join(s0, results.SweepResultsFile))) {
		t.Error("results.csv of shard 0/2 was rewritten")
	}
	s1 := filepath.Join(root, "s1")
	sweepCLI(t, s1, append([]string{"--shard", "1/2"}, tinySweep...)...)
	if code, _, stderr := runCLI(t, "merge", "--no-plots", s0, s1); code != 0 {
		t.Fatalf("merge: %s", stderr)
	}
	if rows := bytes.Count(readFile(t, filepath.Join(s0, results.SweepResultsFile)), []byte("\n")); rows != 7 {
		t.Errorf("merged results.csv has %d lines, want 7", rows)
	}
}
