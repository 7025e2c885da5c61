package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// wallTime matches the one field of summary.json that differs between
// identical runs.
var wallTime = regexp.MustCompile(`"wall_time_s": [^,\n]+`)

// TestGoldenQuickstart runs the quickstart end to end and compares its
// summary.json, wall time zeroed, with testdata/quickstart.golden.json.
// A change to the simulator's behaviour shows here; after checking that
// the change is intended, regenerate with
// `go test ./cmd/handoff -run Golden -update`.
func TestGoldenQuickstart(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "run", quickstart, "-o", dir, "--set", "workload.synthetic.requests=300")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := wallTime.ReplaceAll(readFile(t, filepath.Join(dir, "summary.json")), []byte(`"wall_time_s": 0`))
	golden := filepath.Join("testdata", "quickstart.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readFile(t, golden)
	if !bytes.Equal(got, want) {
		t.Errorf("summary.json differs from %s at %s\n(rerun with -update if the change is intended)",
			golden, firstDiff(string(got), string(want)))
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got " + g[i] + "\nwant " + w[i]
		}
	}
	return "the end: got " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}
