package main

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// TestRunCoresFlag: --cores defaults to one core, 0 asks for every core
// of the machine, and a negative count is refused before anything runs.
func TestRunCoresFlag(t *testing.T) {
	tests := []struct {
		args  []string
		cores int
		err   string
	}{
		{[]string{"s.yaml"}, 1, ""},
		{[]string{"s.yaml", "--cores", "2"}, 2, ""},
		{[]string{"s.yaml", "--cores", "0"}, runtime.NumCPU(), ""},
		{[]string{"s.yaml", "--cores", "-1"}, 0, "--cores -1: want a number of cores ≥ 1, or 0 for every core"},
	}
	for _, tc := range tests {
		var got *runOptions
		cmd := newRunCmd(&bytes.Buffer{}, &bytes.Buffer{}, func(o *runOptions, _ io.Writer) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && (err != nil || got.cores != tc.cores):
			t.Errorf("%v: %v, cores %v, want %d", tc.args, err, got, tc.cores)
		}
	}
}
