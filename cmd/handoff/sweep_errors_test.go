package main

import (
	"bytes"
	"handoff/results"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// snapshot reads every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files[rel] = string(readFile(t, p))
		}
		return nil
	})
	return files
}

// TestSweepBadInput checks that bad input gives one clear line and
// changes nothing in an existing sweep directory.
func TestSweepBadInput(t *testing.T) {
	root := t.TempDir()
	dir, fresh := filepath.Join(root, "out"), filepath.Join(root, "fresh")
	sweepCLI(t, dir, tinySweep...)
	before := snapshot(t, dir)
	withSweep := filepath.Join(root, "sweep.yaml")
	base := string(readFile(t, quickstart))
	write(t, root, "sweep.yaml", base+"sweep:\n  grid:\n    pools.decode.count: []\n")
	write(t, root, "badpath.yaml", base+"sweep:\n  grid:\n    pools.decode.cnt: [1, 2]\n")
	write(t, root, "zip.yaml", base+"sweep:\n  zip:\n    pools.decode.count: [1, 2]\n    workload.rate_scale: [1]\n")
	write(t, root, "other.yaml", strings.Replace(base, "name: quickstart", "name: other", 1))
	os.Mkdir(filepath.Join(root, "foreign"), 0o755)
	write(t, filepath.Join(root, "foreign"), "notes.txt", "mine")
	q := func(extra ...string) []string { return append([]string{"sweep", quickstart}, extra...) }
	tests := []struct {
		args []string
		want string
	}{
		{q("-o", dir, "--vary", "pools.decode.cnt=1,2"), `--vary pools.decode.cnt: no field "cnt" here`},
		{q("-o", dir, "--vary", "pools.decode.count="), "--vary pools.decode.count: empty value list"},
		{q("-o", dir, "--vary", "pools.0.count=1,2", "--vary", "pools.prefill.count=3"),
			"--vary pools.prefill.count: also varied at --vary pools.0.count (both name pools[0].count)"},
		{q("-o", dir, "--vary", "pools.decode.count=1,2", "--shard", "3/2"), "--shard 3/2: the index must be 0 to 1"},
		{q("-o", fresh, "--vary", "pools.decode.count=1,x"), `sweep point 0001-`},
		{q("-o", dir, "--vary", "pools.decode.count=1", "--jobs", "0"), "--jobs 0: want at least 1"},
		{q("-o", dir), "no sweep: block and no --vary flag"},
		{[]string{"sweep", withSweep, "-o", dir}, "sweep.yaml:31: field sweep.grid.pools.decode.count: empty value list"},
		{[]string{"sweep", filepath.Join(root, "badpath.yaml"), "-o", dir}, `badpath.yaml:31: field sweep.grid.pools.decode.cnt: no field "cnt" here`},
		{[]string{"sweep", filepath.Join(root, "zip.yaml"), "-o", dir}, "field sweep.zip.workload.rate_scale: 1 values, but sweep.zip.pools.decode.count has 2"},
		// A valid sweep, but not the one the directory holds.
		{q(append([]string{"-o", dir, "--vary", "pools.decode.count=1,2,3"}, tinySweep[:3]...)...), "will not mix results: the directory holds other points"},
		{q(append([]string{"-o", dir, "--set", "slo.ttft=1s"}, tinySweep...)...), "hold different versions of scenario"},
		{append([]string{"sweep", filepath.Join(root, "other.yaml"), "-o", dir}, tinySweep...), `holds scenario "quickstart", this sweep "other"`},
		{q(append([]string{"-o", filepath.Join(root, "foreign")}, tinySweep...)...), "not empty and holds no sweep.json"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, tt.args...)
		if code == 0 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", tt.args[2:], code, stderr, tt.want)
		}
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a sweep with a bad value created its directory")
	}
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("files changed: %d before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
}

// TestSweepKilledHelper is the child process of TestSweepResumeAfterKill.
func TestSweepKilledHelper(t *testing.T) {
	args := os.Getenv("HANDOFF_SWEEP_CHILD_ARGS")
	if args == "" {
		t.Skip("child process of TestSweepResumeAfterKill")
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// TestSweepResumeAfterKill kills a sweep process (SIGKILL) once a few
// points are saved, reruns the same command and compares results.csv
// with an uninterrupted run's.
func TestSweepResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	ref, dir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "out")
	args := []string{"sweep", quickstart, "-o", dir, "-j", "1", "--no-plots", "--set", "workload.synthetic.requests=200",
		"--vary", "pools.decode.count=1,2,3,4", "--vary", "workload.rate_scale=1,2"}
	child := exec.Command(os.Args[0], "-test.run=^TestSweepKilledHelper$")
	child.Env = append(os.Environ(), "HANDOFF_SWEEP_CHILD_ARGS="+strings.Join(args, "\x1f"))
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); countFinished(dir) < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	killedAt := countFinished(dir)
	t.Logf("killed after %d of 8 points", killedAt)
	if killedAt >= 8 {
		t.Log("the child finished before the kill; the test shows less than it should")
	}

	refArgs := append([]string{}, args...)
	refArgs[3] = ref
	if code, _, stderr := runCLI(t, refArgs...); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "already done") {
		t.Errorf("stdout %q", stdout)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, results.SweepResultsFile)), readFile(t, filepath.Join(ref, results.SweepResultsFile))) {
		t.Error("results.csv after kill and resume differs from an uninterrupted run's")
	}
}
