package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"handoff/results"
	"handoff/scenarios"
	"handoff/sim"
)

// countProbes returns how many probes dir holds finished.
func countProbes(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, results.ProbesDir, "*", results.ProbeRecordFile))
	return len(m)
}

// failingSimulate stands for a simulator that must not be called.
func failingSimulate(*scenarios.Loaded, ...func(*sim.Config)) (results.Summary, *sim.Result, error) {
	return results.Summary{}, nil, errors.New("simulated again")
}

var planArgs = []string{"plan", quickstart, "--target-rate", "60", "--set", smallSets[0],
	"--count", "prefill=1:2", "--count", "decode=1:3"}

// TestPlanReusesProbes: a rerun of plan on its -o directory takes every
// fleet from probes/ (a simulator that fails is never called) and prints
// and writes the same bytes; a damaged probe is named and run again; a
// changed scenario is refused and changes nothing.
func TestPlanReusesProbes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, first, stderr := runCLI(t, append(planArgs, "-o", dir)...)
	if code != 0 || countProbes(dir) == 0 {
		t.Fatalf("exit %d, %d probes: %s", code, countProbes(dir), stderr)
	}
	csv := readFile(t, filepath.Join(dir, "plan.csv"))
	opts := &planOptions{scenario: quickstart, outDir: dir, sets: smallSets, targetRate: 60, maxCount: defaultPlanMaxCount,
		maxRuns: defaultPlanMaxRuns, counts: []string{"prefill=1:2", "decode=1:3"}, simulate: failingSimulate}
	var out bytes.Buffer
	if err := runPlan(opts, &out); err != nil || out.String() != first || !bytes.Equal(csv, readFile(t, filepath.Join(dir, "plan.csv"))) {
		t.Fatalf("rerun from the saved probes: %v; stdout same %v, plan.csv same %v", err, out.String() == first,
			bytes.Equal(csv, readFile(t, filepath.Join(dir, "plan.csv"))))
	}

	recs, _ := filepath.Glob(filepath.Join(dir, results.ProbesDir, "*", results.SummaryFile))
	os.WriteFile(recs[0], []byte("{}\n"), 0o644)
	code, stdout, stderr := runCLI(t, append(planArgs, "-o", dir)...)
	if code != 0 || stdout != first || !strings.Contains(stderr, "summary.json is not the file saved with the probe") ||
		!strings.Contains(stderr, "; it runs again") {
		t.Errorf("after damaging a probe: exit %d, same stdout %v, stderr %q", code, stdout == first, stderr)
	}

	before := snapshot(t, dir)
	code, _, stderr = runCLI(t, append(planArgs, "-o", dir, "--set", "slo.ttft=1s")...)
	if code != exitError || !strings.Contains(stderr, "will not mix results: it holds runs of another version of the scenario") ||
		strings.Count(stderr, "\n") != 1 {
		t.Errorf("with another scenario: exit %d, stderr %q", code, stderr)
	}
	after := snapshot(t, dir)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
}

// TestGoodputResumeAfterKill kills a goodput process (SIGKILL) once a few
// probes are saved, reruns the same command and compares its output and
// goodput.csv with an uninterrupted run's.
func TestGoodputResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	ref, dir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "out")
	args := []string{"goodput", quickstart, "-o", dir, "--set", "workload.synthetic.requests=1500"}
	child := exec.Command(os.Args[0], "-test.run=^TestSweepKilledHelper$")
	child.Env = append(os.Environ(), "HANDOFF_SWEEP_CHILD_ARGS="+strings.Join(args, "\x1f"))
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); countProbes(dir) < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	killedAt := countProbes(dir)
	refArgs := append([]string{}, args...)
	refArgs[3] = ref
	code, want, stderr := runCLI(t, refArgs...)
	if code != 0 {
		t.Fatal(stderr)
	}
	t.Logf("killed after %d of %d probes", killedAt, countProbes(ref))
	if killedAt == 0 {
		t.Fatal("no probe saved before the kill")
	}
	if killedAt >= countProbes(ref) {
		t.Log("the child finished before the kill; the test shows less than it should")
	}
	code, got, stderr := runCLI(t, args...)
	if code != 0 || got != want {
		t.Fatalf("exit %d, stderr %q; stdout after kill and resume:\n%s\nuninterrupted:\n%s", code, stderr, got, want)
	}
	if countProbes(dir) != countProbes(ref) {
		t.Errorf("%d probes saved after the resume, %d by the uninterrupted run", countProbes(dir), countProbes(ref))
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, "goodput.csv")), readFile(t, filepath.Join(ref, "goodput.csv"))) {
		t.Error("goodput.csv after kill and resume differs from an uninterrupted run's")
	}
}

// TestSearchProgress: goodput and plan draw their progress on stderr with
// --progress and print the same stdout as without it.
func TestSearchProgress(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"goodput", quickstart, "--set", "workload.synthetic.requests=60"}, "goodput: 1 runs; strict goodput in ["},
		{planArgs, "plan: 1 fleets run; "},
	} {
		_, plain, _ := runCLI(t, tc.args...)
		code, stdout, stderr := runCLI(t, append(tc.args, "--progress")...)
		if code != 0 || stdout != plain || !strings.Contains(stderr, tc.want) || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%s: exit %d, same stdout %v, stderr %q; want %q", tc.args[0], code, stdout == plain, stderr, tc.want)
		}
		if got := lastFrame(stderr); !strings.Contains(got, " runs; ") && !strings.Contains(got, " fleets run; ") {
			t.Errorf("%s: last frame %q", tc.args[0], got)
		}
	}
}

// TestGoodputRefusesChangedTrace: a rerun of goodput on its directory
// after the trace it read changed is refused, naming the file, before it
// runs or writes anything.
func TestGoodputRefusesChangedTrace(t *testing.T) {
	scenario := traceSweep(t)
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"goodput", scenario, "-o", dir, "--max-runs", "3"}
	if code, _, stderr := runCLI(t, args...); code != 0 && code != exitIncomplete {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := snapshot(t, dir)
	trace := filepath.Join(filepath.Dir(scenario), "traces", "ok.csv")
	f, err := os.OpenFile(trace, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("2023-11-16 18:20:00.00,100,10\n")
	f.Close()
	code, _, stderr := runCLI(t, args...)
	if code != exitError || !strings.Contains(stderr, "will not mix results: a run it holds read "+trace+", which has changed since") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	after := snapshot(t, dir)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
}

// damageProbes rewrites every probe.json of dir with change applied to
// its decoded record, re-encoded as the store writes it.
func damageProbes(t *testing.T, dir string, change func(rec map[string]any)) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(dir, results.ProbesDir, "*", results.ProbeRecordFile))
	for _, path := range recs {
		var rec map[string]any
		if err := json.Unmarshal(readFile(t, path), &rec); err != nil {
			t.Fatal(err)
		}
		change(rec)
		data, _ := json.MarshalIndent(rec, "", "  ")
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDamagedProbeRunsAgain: a probe.json changed after it was written —
// a figure the summary holds, one it does not, the overrides it names, or
// its text cut short — is named on stderr, one line per probe, and run
// again, so goodput and plan print what they printed before. (An edited
// attainment used to be believed: goodput fell from 61.51 to 19.94 req/s
// and plan chose a fleet that missed the target.)
func TestDamagedProbeRunsAgain(t *testing.T) {
	damages := map[string]func(rec map[string]any){
		"attainment": func(rec map[string]any) { rec["probe"].(map[string]any)["Attainment"] = 0.1 },
		"TTFT share": func(rec map[string]any) { rec["probe"].(map[string]any)["TTFTShare"] = 0.1 },
		"GPUs":       func(rec map[string]any) { rec["probe"].(map[string]any)["GPUs"] = 1 },
		"sets":       func(rec map[string]any) { rec["sets"] = []string{"workload.rate_scale=1e6"} },
	}
	for _, args := range [][]string{{"goodput", quickstart, "--set", smallSets[0], "--tolerance", "0.2"}, planArgs} {
		dir := filepath.Join(t.TempDir(), "out")
		args = append(slices.Clip(args), "-o", dir)
		code, first, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, stderr)
		}
		n := countProbes(dir)
		for name, change := range damages {
			damageProbes(t, dir, change)
			code, stdout, stderr := runCLI(t, args...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != 0 || stdout != first || len(lines) != n {
				t.Errorf("%s, %s changed: exit %d, same stdout %v, %d warnings for %d probes:\n%s",
					args[0], name, code, stdout == first, len(lines), n, stderr)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "warning: probe "+filepath.Join(dir, results.ProbesDir)) ||
					!strings.Contains(l, ": probe.json does not match its checksum") || !strings.HasSuffix(l, "; it runs again") {
					t.Errorf("%s, %s changed: warning %q", args[0], name, l)
				}
			}
		}
		recs, _ := filepath.Glob(filepath.Join(dir, results.ProbesDir, "*", results.ProbeRecordFile))
		os.WriteFile(recs[0], readFile(t, recs[0])[:40], 0o644)
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || stdout != first || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "probe.json: unexpected EOF; it runs again") {
			t.Errorf("%s, probe.json cut short: exit %d, same stdout %v, stderr %q", args[0], code, stdout == first, stderr)
		}
	}
}
