package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"handoff/cmd/handoff/internal/docspec"
)

// checkTable runs a table's rows, each in a parallel subtest, renders the
// table and compares it with the document's.
func (h *docHarness) checkTable(t *testing.T, d *docspec.Doc, it *docspec.Item, tb docTable) {
	data := make([]docspec.RowData, len(tb.rows))
	t.Run("rows", func(t *testing.T) {
		for i, r := range tb.rows {
			t.Run(r.Label(), func(t *testing.T) {
				t.Parallel()
				data[i] = h.rowData(t, tb.spec, r)
			})
		}
	})
	if t.Failed() {
		return
	}
	lines, err := tb.spec.Render(tb.rows, data)
	if err != nil {
		t.Fatalf("%s:%d: %v", d.Name, it.Line, err)
	}
	h.compare(t, d, it.Line-1, it.End-1, it.Body, lines, "table")
}

// compare reports how the document's lines [from, to) differ from want,
// or with -update records the rewrite.
func (h *docHarness) compare(t *testing.T, d *docspec.Doc, from, to int, got, want []string, what string) {
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	if *update {
		h.edit(docEdit{doc: d, from: from, to: to, lines: want})
		t.Logf("%s:%d: %s rewritten", d.Name, from+1, what)
		return
	}
	var diff []string
	for i := 0; i < max(len(got), len(want)); i++ {
		g, w := lineAt(got, i), lineAt(want, i)
		if g != w {
			diff = append(diff, fmt.Sprintf("  line %d\n    doc:  %s\n    code: %s", from+1+i, g, w))
		}
	}
	t.Errorf("%s:%d: the %s differs from what the code prints now (rerun with -update if that is intended):\n%s",
		d.Name, from+1, what, strings.Join(diff, "\n"))
}

// lineAt returns lines[i], or "(none)".
func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// rowData runs a row's command (and its sources') and reads what its
// columns are computed from.
func (h *docHarness) rowData(t *testing.T, spec *docspec.Spec, r docspec.Row) docspec.RowData {
	dr := h.runRow(t, r.Cmd, r.Exit)
	if spec.File == "" {
		var sum map[string]any
		b, err := dr.file("summary.json")
		if err == nil {
			err = json.Unmarshal(b, &sum)
		}
		if err != nil {
			t.Fatalf("%s: %v", r.Cmd.Where(), err)
		}
		return docspec.RowData{Summary: sum}
	}
	recs := readRecords(t, dr, spec.File)
	sel, err := spec.Select(r, recs)
	if err != nil {
		t.Fatalf("%s: %v", r.Cmd.Where(), err)
	}
	data := docspec.RowData{Records: sel, Sources: map[string][]map[string]string{}}
	for name, src := range spec.Sources {
		c, err := oneCommand(r.Cmd.File, r.Cmd.Line, src.Command)
		if err != nil {
			t.Fatal(err)
		}
		joined, err := src.Join(r, readRecords(t, h.runRow(t, c, src.Exit), src.File))
		if err != nil {
			t.Fatalf("%s: source %s: %v", r.Cmd.Where(), name, err)
		}
		data.Sources[name] = joined
	}
	return data
}

// runRow runs a row's handoff command and checks its exit status.
func (h *docHarness) runRow(t *testing.T, c docspec.Command, exit int) *docRun {
	args, ok := docspec.HandoffArgs(c.Words)
	if !ok {
		t.Fatalf("%s: %q is not a handoff command", c.Where(), c.Text)
	}
	dr := h.runner.run(args)
	if dr.code != exit {
		t.Fatalf("%s: %q exits %d, want %d: %s", c.Where(), c.Text, dr.code, exit, firstLine(dr.stderr))
	}
	return dr
}

// oneCommand splits text that must be one command.
func oneCommand(file string, line int, text string) (docspec.Command, error) {
	cmds, err := docspec.SplitShell(file, line, text)
	if err == nil && len(cmds) != 1 {
		err = fmt.Errorf("%s:%d: %q is not one command", file, line, text)
	}
	if err != nil {
		return docspec.Command{}, err
	}
	return cmds[0], nil
}

// readRecords reads a CSV a run wrote, one map per row keyed by header.
func readRecords(t *testing.T, dr *docRun, name string) []map[string]string {
	b, err := dr.file(name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v", name, err)
	}
	recs := make([]map[string]string, len(rows)-1)
	for i, row := range rows[1:] {
		recs[i] = map[string]string{}
		for j, col := range rows[0] {
			recs[i][col] = row[j]
		}
	}
	return recs
}

// checkOutput compares a block with the output of the command its
// doc:output marker names (cmd="...", or block="N", the Nth command of
// the sh block above), stdout unless stream="stderr", after replacing
// what mask matches in both by the document's text.
func (h *docHarness) checkOutput(t *testing.T, d *docspec.Doc, it *docspec.Item, mk docspec.Marker) {
	c, err := outputCommand(d, it, mk)
	if err != nil {
		t.Fatalf("%s:%d: doc:output: %v", d.Name, mk.Line, err)
	}
	code, _ := strconv.Atoi(mk.Attr("status"))
	dr := h.runRow(t, c, code)
	out := dr.stdout
	if mk.Attr("stream") == "stderr" {
		out = dr.stderr
	}
	want := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if mask := mk.Attr("mask"); mask != "" {
		re, err := regexp.Compile(mask)
		if err != nil {
			t.Fatalf("%s:%d: doc:output mask: %v", d.Name, mk.Line, err)
		}
		want = keepMasked(re, it.Body, want)
	}
	h.compare(t, d, it.Line, it.End-2, it.Body, want, "output block")
}

// outputCommand returns the command a doc:output marker names.
func outputCommand(d *docspec.Doc, it *docspec.Item, mk docspec.Marker) (docspec.Command, error) {
	if text := mk.Attr("cmd"); text != "" {
		return oneCommand(d.Name, mk.Line, text)
	}
	n, err := strconv.Atoi(mk.Attr("block"))
	if err != nil || n < 1 || it.Above == nil || n > len(it.Above.Commands) {
		return docspec.Command{}, fmt.Errorf("want cmd=\"...\" or block=\"N\", the Nth command of the sh block above")
	}
	return it.Above.Commands[n-1], nil
}

// keepMasked returns got with each line's mask matches replaced by the
// document's line's, so that what the mask covers never differs.
func keepMasked(re *regexp.Regexp, doc, got []string) []string {
	out := make([]string, len(got))
	for i, g := range got {
		out[i] = g
		if i >= len(doc) {
			continue
		}
		keep := re.FindAllString(doc[i], -1)
		n := 0
		out[i] = re.ReplaceAllStringFunc(g, func(m string) string {
			if n < len(keep) {
				m = keep[n]
			}
			n++
			return m
		})
	}
	return out
}
