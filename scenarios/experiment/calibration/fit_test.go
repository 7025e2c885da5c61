package calibration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	calibDir    = "../../../scenarios/calibration"
	profilesDir = "../../../scenarios/profiles"
)

// copyCatalog copies the built-in catalog file into a temporary folder.
func copyCatalog(t *testing.T) string {
	t.Helper()
	cat := filepath.Join(t.TempDir(), "catalog.yaml")
	data, err := os.ReadFile("../../../hardware/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cat, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestFitRefuses: a fit of an accelerator without measurements, and a
// catalog write without a date to name, fail before anything is fitted.
func TestFitRefuses(t *testing.T) {
	cat := copyCatalog(t)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Accelerator: "mi300x"}, `no measurements to fit "mi300x" (have h100-sxm, a100-80gb)`},
		{Options{Accelerator: "a100-80gb", WriteCatalog: cat}, "data carry no date; give --date"},
	} {
		tc.opts.Dir, tc.opts.Profiles, tc.opts.Fit = calibDir, profilesDir, true
		if _, err := Calibrate(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestFitWritesCatalog fits a100-80gb (step profiles only, quick): the
// fitted fields and the provenance go into the catalog file, and the
// report has the fit's section.
func TestFitWritesCatalog(t *testing.T) {
	cat := copyCatalog(t)
	var log strings.Builder
	rep, err := Calibrate(Options{Dir: calibDir, Profiles: profilesDir, Fit: true, Accelerator: "a100-80gb",
		WriteCatalog: cat, Date: "2026-02-18", MaxEvals: 50, Log: &log})
	if err != nil {
		t.Fatal(err)
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
	var report strings.Builder
	if err := rep.WriteMarkdown(&report); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report.String(), "## Fit: a100-80gb") {
		t.Errorf("report lacks the fit section")
	}
	if !strings.Contains(log.String(), "calibrate: fit of a100-80gb: ") {
		t.Errorf("status lines %q lack the fit's", log.String())
	}
}
