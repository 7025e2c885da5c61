package docspec

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitShell(t *testing.T) {
	for _, tc := range []struct {
		text  string
		words [][]string
		lines []int
	}{
		{"handoff run a.yaml   # about a second\ngo test ./...", [][]string{{"handoff", "run", "a.yaml"}, {"go", "test", "./..."}}, []int{1, 2}},
		{"handoff run a.yaml -o out \\\n  --set 'x={a: 1, b: 2}'\n", [][]string{{"handoff", "run", "a.yaml", "-o", "out", "--set", "x={a: 1, b: 2}"}}, []int{1}},
		{"\n\nhandoff run \"a b\" c\\ d 'it''s' \"q\\\"\"", [][]string{{"handoff", "run", "a b", "c d", "its", `q"`}}, []int{3}},
		{"go build -o h ./cmd/handoff && ./h run x.yaml | wc -l; echo ''", [][]string{{"go", "build", "-o", "h", "./cmd/handoff"}, {"./h", "run", "x.yaml"}, {"wc", "-l"}, {"echo", ""}}, []int{1, 1, 1, 1}},
		{"# only a comment\n\n", nil, nil},
		{"a#b c", [][]string{{"a#b", "c"}}, []int{1}},
	} {
		cmds, err := SplitShell("f.md", 1, tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		var words [][]string
		var lines []int
		for _, c := range cmds {
			words, lines = append(words, c.Words), append(lines, c.Line)
		}
		if !slices.EqualFunc(words, tc.words, slices.Equal) || !slices.Equal(lines, tc.lines) {
			t.Errorf("%q: words %q at lines %v, want %q at %v", tc.text, words, lines, tc.words, tc.lines)
		}
	}
}

func TestSplitShellKeepsTheTextAsWritten(t *testing.T) {
	cmds, err := SplitShell("f.md", 1, "handoff run a.yaml \\\n   --set 'x={a: 1}'  # note")
	if err != nil || len(cmds) != 1 {
		t.Fatalf("%v %v", cmds, err)
	}
	if want := "handoff run a.yaml --set 'x={a: 1}'"; cmds[0].Text != want {
		t.Errorf("text %q, want %q", cmds[0].Text, want)
	}
}

func TestSplitShellUnterminatedQuote(t *testing.T) {
	_, err := SplitShell("f.md", 10, "handoff run a.yaml\nhandoff run --set 'x={a: 1}")
	if err == nil || !strings.Contains(err.Error(), "f.md:11: unterminated ' quote") {
		t.Errorf("error %v, want one naming f.md:11 and the quote", err)
	}
}
