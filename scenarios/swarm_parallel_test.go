package scenarios_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/sim"
)

// TestScenarioSwarmParallel: every drawn scenario (every router, pool
// kind and feature the swarm draws) run as `handoff run -o DIR --cores 2`
// writes the same files, byte for byte, as on one core — summary.json,
// requests.csv, timeline.csv, metrics.om, links.csv, fleet.csv, the
// effective scenario — but for the wall-clock time; a run that fails fails
// with the same error. Half the seeds keep their records (KeepRecords),
// as --bench-json does; one in eight writes metrics.om, which costs ten
// times the rest of a case. A quarter of the draws keep their instances
// independent (swarmDoc.split) and run split into shards on two cores: at
// least one case in ten must, when forty or more run. CI runs it on more
// cases than go test's default (.ci/run); reproduce a failure with
// -swarm.seed=S -swarm.cases=1.
func TestScenarioSwarmParallel(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for k := range uint64(*scenarios.SwarmCases) {
		seed := *scenarios.SwarmSeed + k
		doc, _, _ := scenarios.SwarmScenario(seed, root)
		run := func(t *testing.T) {
			if parallelCase(t, doc, runDirOptions{keep: seed%2 == 0, metrics: seed%8 == 1}) {
				split++
			}
		}
		if !t.Run(fmt.Sprintf("seed=%d", seed), run) {
			t.Logf("seed %d:\n%s", seed, doc)
		}
	}
	t.Logf("%d of %d cases ran split into shards on two cores", split, *scenarios.SwarmCases)
	if n := *scenarios.SwarmCases; n >= 40 && split*10 < n {
		t.Errorf("only %d of %d cases ran split into shards, fewer than one in ten: the swarm's split cases (swarmDoc.split) no longer keep their instances independent (sim.NewSplit)", split, n)
	}
}

// parallelCase runs doc on one core and on two and compares what each
// wrote; it reports whether the run on two was split into shards.
func parallelCase(t *testing.T, doc string, opts runDirOptions) bool {
	file := filepath.Join(t.TempDir(), "swarm.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	one, _, errOne := runDirOn(t, file, 1, opts)
	two, split, errTwo := runDirOn(t, file, 2, opts)
	if fmt.Sprint(errOne) != fmt.Sprint(errTwo) {
		t.Fatalf("one core: %v\ntwo cores: %v", errOne, errTwo)
	}
	if errOne != nil {
		return split
	}
	a, b := dirFiles(t, one), dirFiles(t, two)
	if len(a) != len(b) {
		t.Fatalf("one core wrote %v, two cores %v", slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b)))
	}
	for name, want := range a {
		if got, ok := b[name]; !ok || !bytes.Equal(got, want) {
			t.Errorf("%s differs on two cores (%d bytes, %d on one)", name, len(got), len(want))
		}
	}
	return split
}

// runDirOptions are the flags a case runs with besides -o: --bench-json
// (keep the records), --metrics.
type runDirOptions struct{ keep, metrics bool }

// runDirOn runs file as `handoff run -o DIR --cores N` does and returns
// DIR.
func runDirOn(t *testing.T, file string, cores int, opts runDirOptions) (dir string, split bool, err error) {
	l, err := scenarios.Load(file)
	if err != nil {
		return "", false, err
	}
	dir = filepath.Join(t.TempDir(), fmt.Sprintf("cores%d", cores))
	d, err := experiment.CreateRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	configure := []func(*sim.Config){experiment.WithTimeline}
	if opts.keep {
		configure = append(configure, experiment.KeepRecords)
	}
	configure = append(configure, d.Attach)
	if opts.metrics {
		configure = append(configure, d.AttachMetrics)
	}
	var notes strings.Builder
	sum, res, err := experiment.RunOn(l, &notes, cores, configure...)
	if err != nil {
		return "", false, err
	}
	return dir, strings.Contains(notes.String(), " shards"), d.Write(&experiment.Finished{Loaded: l, Summary: sum, Result: res})
}

// dirFiles reads every file under dir, less the lines that carry
// wall-clock time.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = withoutWall(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// withoutWall drops the lines that name wall-clock time, and the event
// count, which measures the core's work as wall time does: a run split into
// shards counts a plan deferred behind another shard's event at the same
// instant as no event (sim/split.go).
func withoutWall(b []byte) []byte {
	var out []byte
	for line := range bytes.Lines(b) {
		if l := strings.ToLower(string(line)); !strings.Contains(l, "wall") && !strings.Contains(l, `"events":`) {
			out = append(out, line...)
		}
	}
	return out
}
