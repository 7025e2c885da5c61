package scenarios_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"handoff/results"
	"handoff/scenarios"
	"handoff/sim"
)

// TestScenarioSwarm draws scenario files from seeds (the draw,
// scenarios.SwarmScenario, writes among its cases every section, field
// and enumerated value a scenario can hold: TestScenarioSwarmDrawsEveryField)
// and takes each through the path a user's file takes with `run`: Load
// (strict decoding, defaults, validation), Build and sim.Run, twice, and
// once more from the effective scenario a run writes out. Every draw must
// load and run; runs of the same file must agree exactly, the effective
// scenario must reproduce the run, and every request must end once with a
// status. Each case then takes one more command of its draw (swarmCommands:
// a sweep of its points, a goodput search, a plan, each on a tiny budget),
// which must run or refuse with a clean error, every probe's requests
// ending once. Reproduce a failure with -swarm.seed=S -swarm.cases=1 (the
// failing file is printed).
func TestScenarioSwarm(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	seen, outcomes := map[string]int{}, map[string]int{}
	for k := range uint64(*scenarios.SwarmCases) {
		seed := *scenarios.SwarmSeed + k
		doc, tags, rate := scenarios.SwarmScenario(seed, root)
		cmd := swarmCommands[rand.New(rand.NewPCG(seed, 0xc0de)).IntN(len(swarmCommands))]
		outcome := ""
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { outcome = swarmCase(t, doc, cmd, rate) }) {
			t.Logf("seed %d (%s):\n%s", seed, cmd.name, doc)
		}
		for _, tag := range tags {
			seen[tag]++
		}
		outcomes[cmd.name+" "+outcome]++
	}
	t.Logf("commands: %v", outcomes)
	if *scenarios.SwarmCases < 100 {
		return
	}
	for _, want := range swarmTags {
		if seen[want] == 0 {
			t.Errorf("the swarm never drew %s: %v", want, seen)
		}
	}
	for _, c := range swarmCommands {
		if outcomes[c.name+" ran"] == 0 {
			t.Errorf("%s never ran: %v", c.name, outcomes)
		}
	}
}

// swarmTags are what the swarm must draw at least once in 100 cases,
// besides the fields TestScenarioSwarmDrawsEveryField requires: the
// combinations that reach different code.
var swarmTags = []string{"pd", "colocated", "wafer", "hybrid", "catalog", "topology", "stale", "dp", "tiers",
	"hybrid-tiers", "store_handoff", "swap", "reject", "closed_loop", "sessions", "faults", "precision", "sweep_block", "plan_block",
	"lease", "decode_first", "hf_config", "trace_columns", "split"}

// swarmCase writes the drawn file, takes it through run and then through
// the command, and returns the command's outcome ("ran" or "refused").
func swarmCase(t *testing.T, doc string, cmd swarmCommand, rateRPS float64) string {
	file := filepath.Join(t.TempDir(), "swarm.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := scenarios.Load(file)
	if err != nil {
		t.Fatalf("the swarm drew a file that does not load: %v", err)
	}
	a := swarmRun(t, l)
	if b := swarmRun(t, l); !scenarios.SameRun(a, b) {
		t.Fatal("two runs of the same scenario differ")
	}
	eff, err := l.Effective(l.Dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenarios.Parse(eff, filepath.Join(l.Dir, "effective.yaml"))
	if err != nil {
		t.Fatalf("the effective scenario does not load: %v\n%s", err, eff)
	}
	if c := swarmRun(t, back); !scenarios.SameRun(a, c) {
		t.Fatalf("the effective scenario runs differently:\n%s", eff)
	}
	checkRecords(t, a.Records)
	if t.Failed() {
		return "failed"
	}
	return cmd.run(t, file, rateRPS)
}

// swarmRun builds and runs a loaded scenario, keeping its records.
func swarmRun(t *testing.T, l *scenarios.Loaded) *sim.Result {
	t.Helper()
	b, err := l.Build()
	if err != nil {
		t.Fatalf("the swarm drew a file that does not build: %v", err)
	}
	defer b.Close()
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkRecords checks that every request ended once, in ID order, after
// it arrived, with a reason unless it completed.
func checkRecords(t *testing.T, records []results.Record) {
	t.Helper()
	for i := range records {
		if msg := recordFault(&records[i], int64(i)); msg != "" {
			t.Fatalf("request %d %s: %+v", i, msg, records[i])
		}
	}
}

// recordFault says what is wrong with record r, the id-th to end, or "".
func recordFault(r *results.Record, id int64) string {
	switch {
	case r.ID != id:
		return fmt.Sprintf("ended as the %d-th", id)
	case r.FinishNs < r.ArrivalNs:
		return "ended before it arrived"
	case r.Status != results.Completed && r.Reason == "":
		return "did not complete and has no reason"
	}
	return ""
}
