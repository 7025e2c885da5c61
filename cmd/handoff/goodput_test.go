package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"handoff/scenarios/search"
)

func TestGoodputFlags(t *testing.T) {
	var got *goodputOptions
	cmd := newGoodputCmd(io.Discard, func(o *goodputOptions, _ io.Writer) error { got = o; return nil })
	cmd.SetArgs([]string{quickstart, "--set", "a=1", "--target", "0.95"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.scenario != quickstart || got.target != 0.95 || got.tolerance != search.DefaultTolerance ||
		got.maxRuns != search.DefaultMaxRuns || len(got.sets) != 1 {
		t.Errorf("options = %+v", got)
	}
	for _, bad := range [][]string{{"--tolerance", "0"}, {"--tolerance", "1"}, {"--target", "1.5"}, {"--target", "-0.1"},
		{"--max-runs", "0"}} {
		cmd := newGoodputCmd(io.Discard, func(*goodputOptions, io.Writer) error { t.Error("ran with", bad); return nil })
		cmd.SetArgs(append([]string{quickstart}, bad...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: got %v, want an error naming the flag", bad, err)
		}
	}
}

// qualifiedGoodput matches "goodput" and what precedes it: every mention
// in an output must be a request goodput (one run's) or a max goodput (the
// search's), never a bare "goodput" that could be either.
var qualifiedGoodput = regexp.MustCompile(`(?i)(max |request[ _-])?goodput`)

// TestGoodputNames runs every command that reports a goodput and checks
// that each mention in its output and files says which one it is.
func TestGoodputNames(t *testing.T) {
	dir := t.TempDir()
	outputs := map[string]string{}
	for name, args := range map[string][]string{
		"run":     {"run", quickstart, "-o", filepath.Join(dir, "run")},
		"goodput": {"goodput", quickstart, "--tolerance", "0.5", "-o", filepath.Join(dir, "goodput")},
		"plan":    {"plan", quickstart, "--target-rate", "20", "--max-count", "2", "-o", filepath.Join(dir, "plan")},
		"sweep":   {"sweep", quickstart, "--vary", "pools.decode.count=1,2", "--no-plots", "-o", filepath.Join(dir, "sweep")},
	} {
		code, stdout, stderr := runCLI(t, append(args, "--set", "workload.synthetic.requests=60")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if name != "sweep" { // its one line names no figure
			outputs[name+" stdout"] = strings.ReplaceAll(stdout, dir, "DIR")
		}
	}
	for _, f := range []string{"run/summary.json", "goodput/goodput.csv", "plan/plan.csv", "sweep/results.csv"} {
		outputs[f] = string(readFile(t, filepath.Join(dir, f)))
	}
	for name, text := range outputs {
		n := 0
		for _, m := range qualifiedGoodput.FindAllStringSubmatch(text, -1) {
			if n++; m[1] == "" {
				t.Errorf("%s: a bare %q", name, m[0])
			}
		}
		if n == 0 {
			t.Errorf("%s: no goodput at all", name)
		}
	}
}

// TestSearchRefusesFixedRate: goodput and plan scale the arrival rate, so
// a workload that sets its own — a closed loop, sessions generated or from
// a trace — is refused before anything runs or is written, in one line
// naming the file, line and field, why, and the sweep to run instead.
// goodput used to crash on sessions (a probe skipped the check that
// refuses rate_scale there) and to report one run at every rate of a
// closed loop; plan named a --set workload.rate_scale the user never typed.
func TestSearchRefusesFixedRate(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "s.csv")
	os.WriteFile(trace, []byte("session_id,turn,timestamp,input_tokens,output_tokens\na,1,0,50,5\na,2,,5,5\nb,1,1,50,5\n"), 0o644)
	doc := string(readFile(t, "../../scenarios/multi-turn.yaml"))
	i, j := strings.Index(doc, "  sessions:\n"), strings.Index(doc, "pools:")
	traced := filepath.Join(dir, "traced.yaml")
	os.WriteFile(traced, []byte(doc[:i]+"  trace: {format: sessions, path: s.csv}\n"+doc[j:]), 0o644)
	closed := "../../scenarios/gptoss-120b-1p1d-h200.yaml"
	multi := "../../scenarios/multi-turn.yaml"
	for _, tc := range []struct {
		scenario, at, vary string // vary: goodput's advice; plan's varies the last pool's count
	}{
		{closed, closed + ":21: field workload.client.concurrency: ", "workload.client.concurrency=8,16,32,64"},
		{multi, multi + ":13: field workload.sessions: ", "workload.sessions.arrival.rate=2/s,4/s,8/s,16/s"},
		{traced, traced + ":13: field workload.trace.format: ", "pools.chat.count=1,2,4,8"},
	} {
		for _, args := range [][]string{{"goodput"}, {"plan", "--target-rate", "10"}} {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, append(args, tc.scenario, "-o", out)...)
			want, vary := "handoff: "+tc.at+"goodput searches the arrival rate by scaling it (workload.rate_scale), which this workload does not take: ", tc.vary
			if args[0] == "plan" {
				want = "handoff: " + tc.at + "plan runs each fleet at --target-rate by scaling the arrival rate (workload.rate_scale), which this workload does not take: "
				vary = "pools.decode.count=1,2,4,8"
				if tc.scenario != closed {
					vary = "pools.chat.count=1,2,4,8"
				}
			}
			if code != exitError || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 ||
				!strings.HasSuffix(stderr, "; to see how the fleet fares instead, sweep: handoff sweep "+tc.scenario+" -o DIR --vary "+vary+"\n") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q\nwant it to start %q", args[0], tc.scenario, code, stdout, stderr, want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s %s wrote %s", args[0], tc.scenario, out)
			}
		}
	}
}
