package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateFitFlags checks the flag combinations calibrate refuses
// before anything runs, and that a refusal of the library's (an
// accelerator without measurements) is one line and exit 1. The fit
// itself is scenarios/experiment/calibration's test.
func TestCalibrateFitFlags(t *testing.T) {
	dir := t.TempDir()
	base := []string{"calibrate", "--dir", "../../scenarios/calibration", "--profiles", "../../scenarios/profiles", "-o", filepath.Join(dir, "c.md")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--loo"}, "need --fit"},
		{[]string{"--write-catalog", filepath.Join(dir, "cat.yaml")}, "need --fit"},
		{[]string{"--fit", "--date", "18 Feb"}, `--date "18 Feb": want YYYY-MM-DD`},
		{[]string{"--fit", "--accelerator", "mi300x"}, `no measurements to fit "mi300x"`},
		{[]string{"--jobs", "-1"}, "must not be negative"},
	} {
		code, _, stderr := runCLI(t, append(base, tc.args...)...)
		if code != 1 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want 1 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
