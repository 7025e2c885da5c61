package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateFitFlags checks the flag combinations --fit refuses, and
// that --fit --accelerator a100-80gb (step profiles only, quick) writes the
// fitted fields and provenance into the catalog named by --write-catalog.
func TestCalibrateFitFlags(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.yaml")
	data, err := os.ReadFile("../../hardware/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cat, data, 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"calibrate", "--dir", "../../scenarios/calibration", "--profiles", "../../scenarios/profiles", "-o", filepath.Join(dir, "c.md")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--loo"}, "need --fit"},
		{[]string{"--write-catalog", cat}, "need --fit"},
		{[]string{"--fit", "--date", "18 Feb"}, `--date "18 Feb": want YYYY-MM-DD`},
		{[]string{"--fit", "--accelerator", "mi300x"}, `no measurements to fit "mi300x"`},
		{[]string{"--fit", "--accelerator", "a100-80gb", "--write-catalog", cat}, "data carry no date; give --date"},
	} {
		code, _, stderr := runCLI(t, append(base, tc.args...)...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", tc.args, code, stderr, tc.want)
		}
	}
	code, _, stderr := runCLI(t, append(base, "--fit", "--accelerator", "a100-80gb", "--write-catalog", cat,
		"--date", "2026-02-18", "--max-evals", "50")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(cat)
	entry := string(got)[strings.Index(string(got), "- name: a100-80gb"):]
	entry = entry[:strings.Index(entry, "- name: mi300x")]
	for _, want := range []string{"decode_mfu: ", "mbu: ", `efficiency_source: "fitted 2026-02-18 by handoff calibrate --fit`} {
		if !strings.Contains(entry, want) {
			t.Errorf("a100-80gb entry lacks %q:\n%s", want, entry)
		}
	}
	if strings.Contains(entry, "step_per_token: ") { // a software cost the profiles' older stacks set
		t.Errorf("a100-80gb entry got the profiles' step_per_token:\n%s", entry)
	}
	if strings.Contains(entry, "mfu: 0.6\n") {
		t.Errorf("a100-80gb mfu not rewritten:\n%s", entry)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "c.md"))
	if !strings.Contains(string(report), "## Fit: a100-80gb") {
		t.Errorf("report lacks the fit section")
	}
}
