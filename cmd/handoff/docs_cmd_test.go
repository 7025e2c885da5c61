package main

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"handoff/cmd/handoff/internal/docspec"
)

// marks are the command markers an item carries.
type marks struct {
	exit         int
	exits        []int // doc:exit's statuses, one per command of the block when more than one
	external     string
	knownFailure string
	with         []string
	each         bool
}

// commandMarks reads an item's command markers; a marker of another kind
// is an error.
func commandMarks(t *testing.T, file string, it *docspec.Item) marks {
	var m marks
	for _, mk := range it.Markers {
		switch mk.Kind {
		case "exit":
			for _, f := range strings.Fields(mk.Attr("status")) {
				code, err := strconv.Atoi(f)
				if err != nil {
					t.Errorf("%s:%d: doc:exit status %q is not a number", file, mk.Line, f)
				}
				m.exits = append(m.exits, code)
			}
			if len(m.exits) > 0 {
				m.exit = m.exits[0]
			}
		case "external":
			m.external = mk.Attr("reason")
		case "known-failure":
			m.knownFailure = mk.Attr("reason")
		case "with":
			m.with, m.each = mk.Attrs["cmd"], mk.Attr("each") == "true"
		default:
			t.Errorf("%s:%d: doc:%s does not apply to a command", file, mk.Line, mk.Kind)
		}
	}
	return m
}

// checkBlock checks a code block: a sh block's commands, or the output a
// doc:output marker says it shows.
func (h *docHarness) checkBlock(t *testing.T, d *docspec.Doc, it *docspec.Item, covered func(docspec.Command) bool) {
	if it.Lang == "sh" {
		h.checkCommands(t, it, covered)
		return
	}
	for _, mk := range it.Markers {
		if mk.Kind != "output" {
			t.Errorf("%s:%d: doc:%s does not apply to a %q block", d.Name, mk.Line, mk.Kind, it.Lang)
			continue
		}
		h.checkOutput(t, d, it, mk)
	}
}

// checkCommands checks the commands of a sh block or a span, in order;
// later commands see the outputs of earlier ones.
func (h *docHarness) checkCommands(t *testing.T, it *docspec.Item, covered func(docspec.Command) bool) {
	if len(it.Commands) == 0 {
		return
	}
	m := commandMarks(t, it.Commands[0].File, it)
	if len(m.exits) > 1 && len(m.exits) != len(it.Commands) {
		t.Errorf("%s: doc:exit gives %d statuses for %d commands", it.Commands[0].Where(), len(m.exits), len(it.Commands))
	}
	group := pathMap{}
	for i, c := range it.Commands {
		if len(m.exits) > 1 && i < len(m.exits) {
			m.exit = m.exits[i]
		}
		h.checkCommand(t, c, m, group, covered)
	}
	if m.knownFailure != "" && !t.Failed() {
		t.Skipf("known failure: %s", m.knownFailure)
	}
}

// checkCommand checks one command by kind.
func (h *docHarness) checkCommand(t *testing.T, c docspec.Command, m marks, group pathMap, covered func(docspec.Command) bool) {
	args, isHandoff := docspec.HandoffArgs(c.Words)
	switch {
	case len(m.with) > 0 && !strings.HasPrefix(c.Words[0], "-"):
		t.Errorf("%s: doc:with applies to a flag example, not to %q", c.Where(), c.Text)
	case m.external != "":
		checkSyntax(t, c)
	case isHandoff:
		h.checkHandoff(t, c, args, m, group)
	case c.Words[0] == "go":
		checkGo(t, c)
	case strings.HasPrefix(c.Words[0], "-"):
		h.checkFlags(t, c, m, covered)
	default:
		t.Errorf("%s: %q is neither a handoff nor a go command: mark it <!-- doc:external reason=\"...\" --> if it is not to run",
			c.Where(), c.Text)
	}
}

// checkHandoff runs a handoff command and checks its exit status; a
// synopsis (with placeholders) and a bare subcommand name are checked
// for their subcommand and flags only.
func (h *docHarness) checkHandoff(t *testing.T, c docspec.Command, args []string, m marks, group pathMap) {
	if len(args) == 0 || docspec.HasPlaceholder(c) || isMention(args) {
		checkUsage(t, c, args)
		return
	}
	dr := h.runner.run(group.apply(args))
	group.note(args, dr)
	expect(t, c, dr, m)
}

// expect checks a run's exit status against the markers.
func expect(t *testing.T, c docspec.Command, dr *docRun, m marks) {
	t.Helper()
	switch {
	case m.knownFailure != "" && dr.code == 0:
		t.Errorf("%s: %q runs now: remove its doc:known-failure marker", c.Where(), c.Text)
	case m.knownFailure != "":
		t.Logf("%s: %q, a known failure (%s), still fails: %s", c.Where(), c.Text, m.knownFailure, firstLine(dr.stderr))
	case dr.code != m.exit:
		t.Errorf("%s: %q exits %d, want %d: %s", c.Where(), c.Text, dr.code, m.exit, firstLine(dr.stderr))
	}
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// isMention reports whether args are only a subcommand that needs
// arguments ("handoff sweep" in prose).
func isMention(args []string) bool {
	root := newRootCmd(io.Discard, io.Discard)
	cmd, rest, err := root.Find(args)
	return err == nil && cmd != root && len(rest) == 0 && cmd.Args != nil && cmd.Args(cmd, nil) != nil
}

// checkFlags checks a flag example ("--set path=value ..."): it must be
// part of a table row's command, or be run by its doc:with marker on the
// commands it names (with each="true", each --set or --vary alone, which
// one of the commands must accept).
func (h *docHarness) checkFlags(t *testing.T, c docspec.Command, m marks, covered func(docspec.Command) bool) {
	switch {
	case docspec.HasPlaceholder(c):
		return
	case len(m.with) == 0 && covered(c):
		return
	case len(m.with) == 0:
		t.Errorf("%s: flag example %q is part of no table's command: give it a <!-- doc:with cmd=\"...\" --> marker",
			c.Where(), c.Text)
		return
	}
	parts := [][]string{c.Words}
	if m.each {
		parts = flagPairs(c.Words)
	}
	for _, part := range parts {
		h.checkWith(t, c, part, m)
	}
}

// checkWith runs part after each command of the doc:with marker: all must
// pass, or with each="true", one.
func (h *docHarness) checkWith(t *testing.T, c docspec.Command, part []string, m marks) {
	var runs []*docRun
	for _, w := range m.with {
		wc, err := oneCommand(c.File, c.Line, w)
		base, ok := docspec.HandoffArgs(wc.Words)
		if err != nil || !ok {
			t.Errorf("%s: doc:with cmd %q is not a handoff command", c.Where(), w)
			return
		}
		dr := h.runner.run(append(base, part...))
		if !m.each {
			expect(t, docspec.Command{File: c.File, Line: c.Line, Text: w + " " + strings.Join(part, " ")}, dr, m)
		}
		runs = append(runs, dr)
	}
	if m.each && !anyExits(runs, m.exit) {
		t.Errorf("%s: %q exits %d after none of the doc:with commands: %s", c.Where(), strings.Join(part, " "),
			m.exit, firstLine(runs[0].stderr))
	}
}

// anyExits reports whether one of the runs exited with code.
func anyExits(runs []*docRun, code int) bool {
	for _, dr := range runs {
		if dr.code == code {
			return true
		}
	}
	return false
}

// flagPairs splits flag words into flags with their values.
func flagPairs(words []string) [][]string {
	var pairs [][]string
	for i := 0; i < len(words); i++ {
		if i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			pairs = append(pairs, words[i:i+2])
			i++
			continue
		}
		pairs = append(pairs, words[i:i+1])
	}
	return pairs
}
