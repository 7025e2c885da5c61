package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/results"
)

func TestReportCmdArgs(t *testing.T) {
	tests := []struct {
		args          []string
		wantDir, want string // wantDir "" = an argument error
	}{
		{[]string{"out"}, "out", ""},
		{[]string{"out", "-o", "r.html"}, "out", "r.html"},
		{nil, "", ""},
		{[]string{"a", "b"}, "", ""},
	}
	for _, tt := range tests {
		var got reportOptions
		var out bytes.Buffer
		cmd := newReportCmd(&out, func(o *reportOptions, _ io.Writer) error { got = *o; return nil })
		cmd.SetArgs(tt.args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.Execute()
		if (err == nil) != (tt.wantDir != "") || got.dir != tt.wantDir || got.outFile != tt.want {
			t.Errorf("args %v: %+v, err %v; want dir %q, -o %q", tt.args, got, err, tt.wantDir, tt.want)
		}
	}
}

// TestReportAfterRun: `handoff report` writes DIR/report.html for a run
// directory, or the file -o names; a directory that is not a handoff
// output is one error naming it and the files expected, exit status 1,
// and nothing is written.
func TestReportAfterRun(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	if code, _, stderr := runCLI(t, "run", quickstart, "-o", dir, "--set", "workload.synthetic.requests=100"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "report", dir)
	if code != 0 || !strings.Contains(stdout, filepath.Join(dir, "report.html")) {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if page := readFile(t, filepath.Join(dir, "report.html")); !bytes.Contains(page, []byte("<svg")) {
		t.Error("report.html has no inline plot")
	}
	other := filepath.Join(root, "r.html")
	if code, _, stderr := runCLI(t, "report", dir, "-o", other); code != 0 {
		t.Fatalf("report -o: exit %d: %s", code, stderr)
	}
	readFile(t, other)

	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "report", empty)
	want := empty + ": not a handoff output directory: it holds none of summary.json"
	if code != exitError || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("report of an empty directory: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(empty, "report.html")); err == nil {
		t.Error("report of an empty directory wrote report.html")
	}
}

// TestReportPlotCutResults: a sweep's results.csv cut inside its header
// (a killed write) makes report and plot fail naming the file, exit 1,
// rather than draw a sweep of no points.
func TestReportPlotCutResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sweepCLI(t, dir, tinySweep...)
	path := filepath.Join(dir, results.SweepResultsFile)
	csv := readFile(t, path)
	header := bytes.IndexByte(csv, '\n')
	if err := os.WriteFile(path, csv[:header-10], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"report", "plot"} {
		code, _, stderr := runCLI(t, cmd, dir)
		if code != exitError || !strings.Contains(stderr, path+": cut short") {
			t.Errorf("%s of a cut results.csv: exit %d, stderr %q; want 1 naming %s", cmd, code, stderr, path)
		}
	}
}
