package outdir

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStaleTempsRemoved: writing a file removes the temporaries of that
// file a killed command left in its folder, and nothing else: not the
// temporaries of other files, nor names that only look like one.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "plots"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := []string{".requests.csv.ABCDEFGH2345.tmp", ".requests.csv.QRSTUVWXYZ67.tmp", "plots/.a.png.AAAAAAAAAAAA.tmp"}
	kept := []string{
		".summary.json.ABCDEFGH2345.tmp",  // another file's
		".requests.csv.tmp",               // no tag
		".requests.csv.ABCDEFGH234.tmp",   // a tag too short
		".requests.csv.abcdefgh2345.tmp",  // not rand.Text's alphabet
		".requests.csv.ABCDEFGH2345.tmp~", // not .tmp
		"requests.csv.ABCDEFGH2345.tmp",   // no leading dot
		"plots/.b.png.AAAAAAAAAAAA.tmp",   // another plot's
	}
	for _, n := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"requests.csv", "plots/a.png"} {
		if err := WriteIn(dir, rel, func(w io.Writer) error { _, err := io.WriteString(w, "ok"); return err }); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("stale %s is still there", n)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
}

// TestTempNamesMatch: the names Create gives its temporaries are the
// names removeStaleTemps recognises.
func TestTempNamesMatch(t *testing.T) {
	f, err := Create(t.TempDir(), "requests.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Discard()
	if !isTempOf(f.tmp, "requests.csv") {
		t.Errorf("Create's temporary %q is not recognised as one", f.tmp)
	}
}
