package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"handoff/results"
	"handoff/results/sweepdir"
	"handoff/scenarios"
)

// shardSweep runs shards 0/n … n−1/n of a sweep into dirs[i] (one worker
// each, so points finish in order) and returns dirs.
func shardSweep(t *testing.T, scenario string, dirs []string, args ...string) []string {
	t.Helper()
	for i, dir := range dirs {
		all := append([]string{"sweep", scenario, "-o", dir, "-j", "1", "--shard", fmt.Sprintf("%d/%d", i, len(dirs))}, args...)
		if code, _, stderr := runCLI(t, all...); code != 0 {
			t.Fatalf("shard %d: %s", i, stderr)
		}
	}
	return dirs
}

func TestMergeFlags(t *testing.T) {
	var got *mergeOptions
	cmd := newMergeCmd(io.Discard, func(o *mergeOptions, _ io.Writer) error { got = o; return nil })
	cmd.SetArgs([]string{"-o", "all", "a", "b", "--no-plots"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.outDir != "all" || strings.Join(got.dirs, " ") != "a b" || !got.noPlots {
		t.Errorf("options %+v", got)
	}
	cmd = newMergeCmd(io.Discard, func(o *mergeOptions, _ io.Writer) error { got = o; return nil })
	cmd.SetArgs([]string{"a", "b"})
	if err := cmd.Execute(); err != nil || got.outDir != "a" {
		t.Errorf("merge without -o: %v, out %q; want the first directory", err, got.outDir)
	}
	cmd = newMergeCmd(io.Discard, func(*mergeOptions, io.Writer) error { return nil })
	cmd.SetArgs(nil)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("merge of no directories succeeded")
	}
}

// TestMergeEqualsUnsharded runs a sweep whole and in 3 shards; merging the
// shards (into a new directory, or into one of them) gives the same
// results.csv byte for byte, and the same point files.
func TestMergeEqualsUnsharded(t *testing.T) {
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	sweepCLI(t, whole, tinySweep...)
	shards := shardSweep(t, quickstart, []string{filepath.Join(root, "s0"), filepath.Join(root, "s1"), filepath.Join(root, "s2")}, tinySweep...)
	for _, s := range shards {
		if rows := bytes.Count(readFile(t, filepath.Join(s, results.SweepResultsFile)), []byte("\n")); rows != 3 {
			t.Errorf("%s/results.csv has %d lines, want a header and 2 rows", s, rows)
		}
	}
	want := readFile(t, filepath.Join(whole, results.SweepResultsFile))
	for _, out := range []string{filepath.Join(root, "merged"), shards[1]} {
		args := append([]string{"merge", "--no-plots", "-o", out}, shards...)
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("merge: %s", stderr)
		}
		if !strings.Contains(stdout, "6 points from 3 directories") {
			t.Errorf("stdout %q", stdout)
		}
		if got := readFile(t, filepath.Join(out, results.SweepResultsFile)); !bytes.Equal(got, want) {
			t.Errorf("merged into %s:\n%s\nunsharded:\n%s", out, got, want)
		}
		m, err := sweepdir.ReadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		if m.Shard != "all" {
			t.Errorf("merged into %s: its sweep.json holds shard %q, want all", out, m.Shard)
		}
		for _, p := range m.Points {
			a := readFile(t, filepath.Join(sweepdir.PointPath(whole, p.ID), results.ScenarioFile))
			if b := readFile(t, filepath.Join(sweepdir.PointPath(out, p.ID), results.ScenarioFile)); !bytes.Equal(a, b) {
				t.Errorf("scenario.yaml of point %s differs after merge", p.ID)
			}
			// The summaries differ in their wall time, so their hashes do too.
			ra, rb := readRecord(t, whole, p.ID), readRecord(t, out, p.ID)
			ra.SummarySHA256, rb.SummarySHA256 = "", ""
			if !reflect.DeepEqual(ra, rb) {
				t.Errorf("point.json of point %s differs after merge:\n%+v\n%+v", p.ID, ra, rb)
			}
		}
	}
	// Merging again changes nothing and copies nothing.
	_, stdout, _ := runCLI(t, append([]string{"merge", "--no-plots", "-o", filepath.Join(root, "merged")}, shards...)...)
	if !strings.Contains(stdout, "(0 copied)") {
		t.Errorf("second merge: %q", stdout)
	}
}

// TestMergeRelocatesPaths merges shards kept at different depths: each
// point's scenario.yaml must still reach the scenario's trace file.
func TestMergeRelocatesPaths(t *testing.T) {
	scenario := filepath.Join("..", "..", "scenarios", "testdata", "trace.yaml")
	trace, err := filepath.Abs(filepath.Join("..", "..", "scenarios", "testdata", "traces", "ok.csv"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	shards := shardSweep(t, scenario, []string{filepath.Join(root, "s0"), filepath.Join(root, "deep", "er", "s1")},
		"--no-plots", "--vary", "pools.decode.count=1,2,3")
	out := filepath.Join(root, "m")
	if code, _, stderr := runCLI(t, append([]string{"merge", "--no-plots", "-o", out}, shards...)...); code != 0 {
		t.Fatal(stderr)
	}
	m, _ := sweepdir.ReadManifest(out)
	for _, p := range m.Points {
		l, err := scenarios.Load(filepath.Join(sweepdir.PointPath(out, p.ID), "scenario.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := filepath.Abs(l.Resolve(l.Workload.Trace.Path)); got != trace {
			t.Errorf("point %s: trace resolves to %s, want %s", p.ID, got, trace)
		}
	}
}

func TestMergeBadInput(t *testing.T) {
	root := t.TempDir()
	shards := shardSweep(t, quickstart, []string{filepath.Join(root, "s0"), filepath.Join(root, "s1"), filepath.Join(root, "s2")}, tinySweep...)
	other := filepath.Join(root, "other")
	sweepCLI(t, other, "--no-plots", "--set", "workload.synthetic.requests=50", "--vary", "pools.decode.count=1,2")
	os.Mkdir(filepath.Join(root, "plain"), 0o755)
	out := filepath.Join(root, "out")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", out, shards[0], shards[2]}, "will not merge: 2 of 6 points are saved whole in none of the directories, the first 0001-"},
		{[]string{"-o", out, shards[0], other}, "will not merge: " + other + " holds other points (2 varying pools.decode.count) than " + shards[0] +
			" (6 varying pools.decode.count, workload.rate_scale)"},
		{[]string{"-o", out, filepath.Join(root, "plain")}, "plain: no sweep.json"},
		{append([]string{"-o", other}, shards...), other + ": will not mix results"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, append([]string{"merge", "--no-plots"}, tt.args...)...)
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("merge %v: exit %d, %q; want %q", tt.args, code, stderr, tt.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed merge created its output directory")
	}
}

// readRecord reads a point's point.json.
func readRecord(t *testing.T, dir, id string) sweepdir.PointRecord {
	t.Helper()
	var rec sweepdir.PointRecord
	if err := json.Unmarshal(readFile(t, filepath.Join(sweepdir.PointPath(dir, id), results.PointRecordFile)), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}
