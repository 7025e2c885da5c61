package calibration

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"handoff/scenarios/calibrate"
)

// TestCalibrationDocIsCurrent holds docs/CALIBRATION.md to the code and the
// catalog. The document is what `handoff calibrate --fit --fit-pd --loo
// --write-catalog hardware/catalog.yaml -o docs/CALIBRATION.md` wrote: its
// comparison and targets must be what the plain comparison at the catalog's
// values prints now, and its fitted values must be the catalog's. (Its
// fit figures and leave-one-out tables need the refit itself, minutes
// long, which is what the command reruns.)
// pdSection starts the measured P/D runs' section (pdHeader).
const pdSection = "\n## Measured P/D runs"

// locoSection starts the leave-one-configuration-out section (locoHeader).
const locoSection = "\n## Leave one configuration out"

func TestCalibrationDocIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the calibration set")
	}
	doc, err := os.ReadFile("../../../docs/CALIBRATION.md")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := Calibrate(Options{Dir: "../../../scenarios/calibration", PD: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	prefix, _, found := strings.Cut(string(doc), "\n## Fit")
	if !found {
		t.Fatal("docs/CALIBRATION.md has no Fit section: regenerate it with handoff calibrate --fit --fit-pd --loo")
	}
	prefix = strings.TrimRight(prefix, "\n")
	plain, pd, _ := strings.Cut(out.String(), pdSection)
	_, docPD, ok := strings.Cut(string(doc), pdSection)
	docPD, _, _ = strings.Cut(docPD, locoSection) // the refit's, which the plain comparison has not
	if !ok || strings.TrimRight(docPD, "\n") != strings.TrimRight(pd, "\n") {
		t.Errorf("docs/CALIBRATION.md's measured P/D runs are not what the code prints at the catalog's values:\n%s",
			firstDiff(pd, docPD))
	}
	if got := strings.TrimRight(plain, "\n"); got != prefix {
		t.Errorf("docs/CALIBRATION.md's comparison is not what the code prints at the catalog's values:\n%s",
			firstDiff(got, prefix))
	}
	src, err := calibrate.Sources("h100-sxm", "../../../scenarios/calibration", "../../../scenarios/profiles")
	if err != nil {
		t.Fatal(err)
	}
	h, err := StartHardware("", "h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	accel, link := calibrate.CatalogFields(src.Params, &h)
	for _, kv := range append(accel, link...) {
		if row := "| " + kv.Key + " | "; !strings.Contains(string(doc), row) ||
			!strings.Contains(string(doc), " | "+kv.Value+" | ") {
			t.Errorf("docs/CALIBRATION.md's Fit table does not give the catalog's %s %s", kv.Key, kv.Value)
		}
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got " + g[i] + "\nwant " + w[i]
		}
	}
	return "the end: got " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}
