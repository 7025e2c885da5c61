package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// brokenDoc holds one of each mistake TestDocs must catch.
const brokenDoc = "```sh\n" +
	"go run ./cmd/handoff run scenarios/no-such.yaml\n" +
	"```\n" +
	"\n" +
	"Exits 1, says the text: <!-- doc:exit status=\"1\" -->`handoff catalog models`; unmarked: `kubectl get pods`;\n" +
	"an example nothing runs: `--set router.policy=dynamo`; a synopsis: `handoff run SCENARIO [--no-such N]`;\n" +
	"a test: `go test ./models/perf -run TestNoSuchThing`; fixed: <!-- doc:known-failure reason=\"r\" -->`handoff catalog hardware`.\n" +
	"\n" +
	"<!-- doc:output cmd=\"handoff validate scenarios/quickstart.yaml --set model=llama-3.1-405b\" stream=\"stderr\" status=\"1\" -->\n" +
	"```\n" +
	"handoff: an error message the code does not print\n" +
	"```\n" +
	"\n" +
	"Rows' flags: a: `--set seed=2`.\n" +
	"\n" +
	"| command | what |\n" +
	"|---|---|\n" +
	"| `handoff plot DIR [--no-such]` | a synopsis in a table |\n" +
	"\n" +
	"<!-- doc:with cmd=\"handoff validate scenarios/quickstart.yaml\" -->\n" +
	"```sh\n" +
	"handoff catalog models\n" +
	"```\n" +
	"\n" +
	"Each alone: <!-- doc:with each=\"true\" cmd=\"handoff validate scenarios/quickstart.yaml\" -->`--set seed=3 --set router.policy=no-such`.\n"

// tableDoc is a table made from a run, one figure wrong.
const tableDoc = "<!-- doc:table\n" +
	"command: handoff run scenarios/quickstart.yaml --set workload.synthetic.requests=50\n" +
	"labels: [seed]\n" +
	"rows: [{cells: [\"1\"]}, {cells: [\"2\"], args: --seed 2}]\n" +
	"columns: [{head: completed, value: requests.completed, format: \"%d\"}]\n" +
	"-->\n" +
	"| seed | completed |\n" +
	"|---|---|\n" +
	"| 1 | 50 |\n" +
	"| 2 | 49 |\n"

// runDocsTest runs TestDocs in a child process on the documents given, and
// returns its output and whether it passed.
func runDocsTest(t *testing.T, docs []string, flags ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run", "^TestDocs$", "-test.v"}, flags...)...)
	cmd.Env = append(os.Environ(), docsEnv+"="+strings.Join(docs, string(filepath.ListSeparator)), docsRunEnv+"=1")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// writeDoc writes a document into dir.
func writeDoc(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDocsCatchesEveryKindOfDrift(t *testing.T) {
	broken := writeDoc(t, t.TempDir(), "broken.md", brokenDoc)
	out, ok := runDocsTest(t, []string{broken})
	if ok {
		t.Fatalf("TestDocs passed on a broken document:\n%s", out)
	}
	for _, want := range []string{
		`broken.md:2: "go run ./cmd/handoff run scenarios/no-such.yaml" exits 1, want 0`,
		`broken.md:5: "handoff catalog models" exits 0, want 1`,
		`broken.md:5: "kubectl get pods" is neither a handoff nor a go command`,
		`broken.md:6: flag example "--set router.policy=dynamo" is part of no table's command`,
		`broken.md:6: "handoff run SCENARIO [--no-such N]": handoff run has no flag --no-such`,
		`broken.md:7: "go test ./models/perf -run TestNoSuchThing": no Test function in ./models/perf matches`,
		`broken.md:7: "handoff catalog hardware" runs now: remove its doc:known-failure marker`,
		`broken.md:11: the output block differs`,
		`broken.md:14: a Rows' flags line that no table spec (rows: flags) reads`,
		`broken.md:18: "handoff plot DIR [--no-such]": handoff plot has no flag --no-such`,
		`broken.md:22: doc:with applies to a flag example, not to "handoff catalog models"`,
		`broken.md:25: "--set router.policy=no-such" exits 0 after none of the doc:with commands`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("TestDocs does not report %q; it says:\n%s", want, out)
		}
	}
}

func TestDocsUpdateRewritesOnlyTheTable(t *testing.T) {
	path := writeDoc(t, t.TempDir(), "table.md", "Before.\n\n"+tableDoc+"\nAfter.\n")
	if out, ok := runDocsTest(t, []string{path}); ok || !strings.Contains(out, "line 12") ||
		!strings.Contains(out, "doc:  | 2 | 49 |") || !strings.Contains(out, "code: | 2 | 50 |") {
		t.Fatalf("a wrong figure went unreported:\n%s", out)
	}
	if out, ok := runDocsTest(t, []string{path}, "-update"); !ok {
		t.Fatalf("-update failed:\n%s", out)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Before.\n\n" + strings.Replace(tableDoc, "| 2 | 49 |", "| 2 | 50 |", 1) + "\nAfter.\n"; string(got) != want {
		t.Errorf("after -update:\n%s\nwant:\n%s", got, want)
	}
	if out, ok := runDocsTest(t, []string{path}); !ok {
		t.Errorf("TestDocs fails on the rewritten document:\n%s", out)
	}
}
