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
