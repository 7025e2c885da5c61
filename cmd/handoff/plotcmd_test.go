package main

import (
	"bytes"
	"errors"
	"handoff/results/plot"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotCmdArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantDir string // "" = an argument error
	}{
		{[]string{"out"}, "out"},
		{nil, ""},
		{[]string{"a", "b"}, ""},
	}
	for _, tt := range tests {
		var got string
		var out bytes.Buffer
		cmd := newPlotCmd(&out, func(dir string, _ plot.Choice) error { got = dir; return nil })
		cmd.SetArgs(tt.args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.Execute()
		if (err == nil) != (tt.wantDir != "") || got != tt.wantDir {
			t.Errorf("args %v: drew %q, err %v; want %q", tt.args, got, err, tt.wantDir)
		}
	}
	cmd := newPlotCmd(&bytes.Buffer{}, func(string, plot.Choice) error { return errors.New("boom") })
	cmd.SetArgs([]string{"out"})
	cmd.SetOut(&bytes.Buffer{}) // cobra prints the error and usage when run alone, not under the root
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || err.Error() != "boom" {
		t.Errorf("got %v, want the draw error", err)
	}
}

// TestPlotAfterRun: `handoff plot` re-draws a run directory written by
// `handoff run -o`.
func TestPlotAfterRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runCLI(t, "run", quickstart, "-o", dir, "--set", "workload.synthetic.requests=100"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "plot", dir)
	if code != 0 || !strings.Contains(stdout, filepath.Join(dir, "plots")) {
		t.Fatalf("plot: exit %d: %q %q", code, stdout, stderr)
	}
	for _, name := range []string{"ttft_cdf.png", "tpot_cdf.svg", "attribution.png", "attribution_owner.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, "plots", name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if code, _, stderr := runCLI(t, "plot", t.TempDir()); code == 0 || !strings.Contains(stderr, "summary.json") {
		t.Errorf("plot of an empty directory: exit %d, %q", code, stderr)
	}
}

// TestPlotChoiceChecked: --select of an id no point has is an error that
// names the points; --select or --top on a run's directory is an error
// saying they apply to sweeps; a choice of fewer bars removes the
// attribution pages an earlier drawing of more left.
func TestPlotChoiceChecked(t *testing.T) {
	sweep := filepath.Join(t.TempDir(), "sweep")
	sweepCLI(t, sweep, tinySweep...)
	code, _, stderr := runCLI(t, "plot", sweep, "--select", "0099")
	want := "--select 0099: no point of " + sweep + " has an id that starts with it; its 6 points are 0000-"
	if code != exitError || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("plot --select of no point: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}

	plots := filepath.Join(sweep, "plots")
	stale := []string{"attribution_2.png", "attribution_2.svg", "attribution_owner_2.png", "attribution_owner_2.svg"}
	if err := os.MkdirAll(plots, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range append(stale, "notes.txt") {
		write(t, plots, n, "an earlier drawing")
	}
	if code, _, stderr := runCLI(t, "plot", sweep, "--top", "2"); code != 0 {
		t.Fatalf("plot --top 2: exit %d: %s", code, stderr)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(plots, n)); err == nil {
			t.Errorf("plot --top 2 left the earlier drawing's %s", n)
		}
	}
	if _, err := os.Stat(filepath.Join(plots, "notes.txt")); err != nil {
		t.Errorf("plot removed a file it did not draw: %v", err)
	}

	run := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(t, "run", quickstart, "-o", run, "--set", "workload.synthetic.requests=20"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	for _, flag := range [][]string{{"--top", "3"}, {"--select", "0000"}} {
		code, _, stderr := runCLI(t, append([]string{"plot", run}, flag...)...)
		if code != exitError || !strings.Contains(stderr, "--select and --top apply to sweeps") {
			t.Errorf("plot %s on a run: exit %d, stderr %q", flag[0], code, stderr)
		}
	}
}
