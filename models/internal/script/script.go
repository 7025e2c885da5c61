// Package script runs the behaviour scripts of the models' tests: files of
// cases, each a command line, a "----" line and the expected output up to
// a blank line, with blank lines and lines starting with # kept as they
// are. A package's test gives the interpreter of its commands; this runs
// the file through it, compares each output with the file's and, asked
// to, rewrites the file with what the commands printed.
package script

import (
	"os"
	"strings"
	"testing"
)

// Run interprets the script at path with do (called with the command's
// line number and text, returning what it prints) and returns the whole
// output in the file's format. With check, each case's output must equal
// the file's, or, with rewrite, the file is rewritten with the output.
func Run(t testing.TB, path string, check, rewrite bool, do func(lineNo int, cmd string) string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s:%d: command %q not followed by ----", path, i+1, line)
		}
		cmdLine := i + 1
		i += 2
		var want []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			want = append(want, lines[i])
		}
		got := do(cmdLine, line)
		if g, w := strings.TrimRight(got, "\n"), strings.Join(want, "\n"); check && !rewrite && g != w {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, cmdLine, line, g, w)
		}
		out.WriteString(line + "\n----\n" + got + "\n")
	}
	if check && rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}
