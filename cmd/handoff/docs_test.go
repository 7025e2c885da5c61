package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"handoff/cmd/handoff/internal/docspec"
)

// TestDocs runs every command of README.md and docs/*.md and remakes every
// table and output block that a doc: marker describes, from the code as it
// is now: a command that does not run (or exits otherwise than its
// doc:exit marker says), a flag example no command runs, or a table or
// output block that differs from what the commands print fails the test.
// Handoff commands run in-process from the repository root, their output
// paths moved to a temporary directory; identical commands run once. Go
// and other commands are checked for syntax (packages, test names and
// repository paths exist). -update rewrites the tables and output blocks
// in place; nothing else in the documents changes.
//
// The markers (HTML comments, invisible when rendered) are described in
// the docspec package: go doc handoff/cmd/handoff/internal/docspec. It
// runs only when asked — the environment variable docsRunEnv set to 1, as
// CI sets it, or with -update — since it re-runs some 140 commands: about
// a minute of wall time and three CPU-minutes on an idle 2-core machine,
// several times that on a loaded one.
func TestDocs(t *testing.T) {
	if os.Getenv(docsRunEnv) != "1" && !*update {
		t.Skipf("re-runs every command of README.md and docs/*.md (about 3 CPU-minutes, a minute on an idle "+
			"2-core machine): run it with %s=1 go test ./cmd/handoff -run 'TestDocs$' (CI does)", docsRunEnv)
	}
	if testing.Short() {
		t.Skip("-short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs := parseDocs(t, root)
	t.Chdir(root)
	h := &docHarness{runner: newDocRunner(t.TempDir())}
	begin := time.Now()
	t.Run("docs", func(t *testing.T) {
		for _, d := range docs {
			t.Run(d.Name, func(t *testing.T) {
				t.Parallel()
				h.checkDoc(t, d)
			})
		}
	})
	t.Logf("%d distinct commands run in %.1f s; the slowest:\n%s", len(h.runner.runs), time.Since(begin).Seconds(),
		h.runner.slowest(5))
	if *update {
		h.applyEdits(t)
	}
}

// docsRunEnv, set to 1, makes TestDocs run.
const docsRunEnv = "HANDOFF_DOCS"

// docsEnv names the documents TestDocs checks instead of README.md and
// docs/*.md (a list of absolute paths), for the test of TestDocs itself.
const docsEnv = "HANDOFF_TEST_DOCS"

// parseDocs reads README.md and docs/*.md, or the documents docsEnv lists.
func parseDocs(t *testing.T, root string) []*docspec.Doc {
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{filepath.Join(root, "README.md")}, paths...)
	if list := os.Getenv(docsEnv); list != "" {
		paths = filepath.SplitList(list)
	}
	var docs []*docspec.Doc
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name, err := filepath.Rel(root, path)
		if err != nil || strings.HasPrefix(name, "..") {
			name = path
		}
		d, err := docspec.Parse(filepath.ToSlash(name), string(text))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// docHarness checks documents, sharing one runner, and collects the
// rewrites -update makes.
type docHarness struct {
	runner *docRunner
	mu     sync.Mutex
	edits  []docEdit
}

// docEdit replaces lines [from, to) (0-based) of a document.
type docEdit struct {
	doc      *docspec.Doc
	from, to int
	lines    []string
}

// edit records a rewrite for -update.
func (h *docHarness) edit(e docEdit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.edits = append(h.edits, e)
}

// applyEdits rewrites the documents, each edit in place.
func (h *docHarness) applyEdits(t *testing.T) {
	byDoc := map[*docspec.Doc][]docEdit{}
	for _, e := range h.edits {
		byDoc[e.doc] = append(byDoc[e.doc], e)
	}
	for d, edits := range byDoc {
		slices.SortFunc(edits, func(a, b docEdit) int { return b.from - a.from })
		lines := slices.Clone(d.Lines)
		for _, e := range edits {
			lines = slices.Replace(lines, e.from, e.to, e.lines...)
		}
		if err := os.WriteFile(d.Name, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d tables or output blocks in %s", len(edits), d.Name)
	}
}

// checkDoc checks every item of a document, each in a parallel subtest.
func (h *docHarness) checkDoc(t *testing.T, d *docspec.Doc) {
	tables, covered := h.tableRows(t, d)
	for _, it := range d.Items {
		t.Run(fmt.Sprintf("L%d", it.Line), func(t *testing.T) {
			t.Parallel()
			switch it.Kind {
			case docspec.Table:
				if tb, ok := tables[it]; ok {
					h.checkTable(t, d, it, tb)
				}
			case docspec.Block:
				h.checkBlock(t, d, it, covered)
			case docspec.Span:
				h.checkCommands(t, it, covered)
			}
		})
	}
}

// docTable is a table with its spec and rows.
type docTable struct {
	spec *docspec.Spec
	rows []docspec.Row
}

// tableRows reads the specs of a document's tables and returns them, and
// a test of whether a flag example is part of some row's command. Every
// "Rows' flags:" line must feed a table.
func (h *docHarness) tableRows(t *testing.T, d *docspec.Doc) (map[*docspec.Item]docTable, func(docspec.Command) bool) {
	tables := map[*docspec.Item]docTable{}
	var cmds [][]string
	fed := map[*docspec.Item]bool{}
	for _, it := range d.Items {
		if it.Kind != docspec.Table || len(it.Markers) == 0 {
			continue
		}
		tb, err := tableOf(d, it)
		if err != nil {
			t.Errorf("%s:%d: %v", d.Name, it.Line, err)
			continue
		}
		tables[it] = tb
		for _, r := range tb.rows {
			cmds = append(cmds, r.Cmd.Words)
		}
		if tb.spec.Rows.FromFlags {
			fed[docspec.FlagsAfter(d, it)] = true
		}
	}
	for _, it := range d.Items {
		if it.Kind == docspec.FlagsLine && !fed[it] {
			t.Errorf("%s:%d: a Rows' flags line that no table spec (rows: flags) reads", d.Name, it.Line)
		}
	}
	covered := func(c docspec.Command) bool {
		return slices.ContainsFunc(cmds, func(words []string) bool { return containsRun(words, c.Words) })
	}
	return tables, covered
}

// tableOf reads a table's doc:table marker and expands its rows.
func tableOf(d *docspec.Doc, it *docspec.Item) (docTable, error) {
	m := it.Markers[0]
	if len(it.Markers) != 1 || m.Kind != "table" {
		return docTable{}, fmt.Errorf("a table takes one doc:table marker, not doc:%s", m.Kind)
	}
	spec, err := docspec.ParseSpec(m)
	if err != nil {
		return docTable{}, err
	}
	rows, err := spec.Expand(d, it, m.Line)
	return docTable{spec, rows}, err
}

// containsRun reports whether words holds part as consecutive words.
func containsRun(words, part []string) bool {
	for i := 0; i+len(part) <= len(words); i++ {
		if slices.Equal(words[i:i+len(part)], part) {
			return true
		}
	}
	return false
}
