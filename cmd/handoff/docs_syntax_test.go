package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"handoff/cmd/handoff/internal/docspec"
)

// checkSyntax checks a command that is not run: a handoff command for its
// subcommand and flags, a go command for its packages and test names, any
// other for the repository paths it names.
func checkSyntax(t *testing.T, c docspec.Command) {
	if args, ok := docspec.HandoffArgs(c.Words); ok {
		checkUsage(t, c, args)
		return
	}
	if c.Words[0] == "go" {
		checkGo(t, c)
		return
	}
	checkPaths(t, c)
}

// checkUsage checks that a handoff synopsis names a subcommand and only
// flags that subcommand has ("[--set ...]" and "-o DIR" alike).
func checkUsage(t *testing.T, c docspec.Command, args []string) {
	if len(args) == 0 {
		return
	}
	root := newRootCmd(io.Discard, io.Discard)
	n := 0
	for n < len(args) && !strings.ContainsAny(args[n][:1], "-[") {
		n++
	}
	cmd, _, err := root.Find(args[:n])
	if err != nil || cmd == root {
		t.Errorf("%s: %q names no handoff subcommand", c.Where(), c.Text)
		return
	}
	for _, a := range args[n:] {
		if flag := strings.Trim(a, "[]"); strings.HasPrefix(flag, "-") && !hasFlag(cmd, flag) {
			t.Errorf("%s: %q: handoff %s has no flag %s", c.Where(), c.Text, cmd.Name(), flag)
		}
	}
}

// hasFlag reports whether cmd has a flag ("--name", "--name=value" or
// "-x").
func hasFlag(cmd *cobra.Command, flag string) bool {
	if name, ok := strings.CutPrefix(flag, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		return cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
	}
	return len(flag) == 2 && cmd.Flags().ShorthandLookup(flag[1:]) != nil
}

// goValueFlags are the go command flags that take a value.
var goValueFlags = map[string]bool{"-run": true, "-bench": true, "-benchtime": true, "-count": true, "-o": true,
	"-timeout": true, "-p": true, "-tags": true, "-cpu": true, "-parallel": true, "-coverprofile": true}

// checkGo checks a go command: its package directories exist and its
// -run and -bench patterns match tests and benchmarks there ("-run XXX"
// beside -bench is the usual way of running no test).
func checkGo(t *testing.T, c docspec.Command) {
	flags := map[string]string{}
	var pkgs []string
	for i := 2; i < len(c.Words); i++ {
		w := c.Words[i]
		switch {
		case goValueFlags[w] && i+1 < len(c.Words):
			flags[w] = c.Words[i+1]
			i++
		case !strings.HasPrefix(w, "-"):
			pkgs = append(pkgs, w)
		}
	}
	for _, pkg := range pkgs {
		dir := strings.TrimSuffix(strings.TrimSuffix(pkg, "..."), "/")
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			t.Errorf("%s: %q: no package directory %s", c.Where(), c.Text, pkg)
			continue
		}
		if strings.HasSuffix(pkg, "...") {
			continue
		}
		if p, ok := flags["-bench"]; ok {
			checkTestNames(t, c, dir, "Benchmark", p)
		} else if p, ok := flags["-run"]; ok {
			checkTestNames(t, c, dir, "Test", p)
		}
	}
}

// checkTestNames checks that pattern's first level matches a function
// named prefix... in dir's test files.
func checkTestNames(t *testing.T, c docspec.Command, dir, prefix, pattern string) {
	re, err := regexp.Compile(strings.Split(pattern, "/")[0])
	if err != nil {
		t.Errorf("%s: %q: pattern %q: %v", c.Where(), c.Text, pattern, err)
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	decl := regexp.MustCompile(`(?m)^func (` + prefix + `\w*)\(`)
	for _, f := range files {
		src, _ := os.ReadFile(f)
		for _, m := range decl.FindAllSubmatch(src, -1) {
			if re.Match(m[1]) {
				return
			}
		}
	}
	t.Errorf("%s: %q: no %s function in %s matches %q", c.Where(), c.Text, prefix, dir, pattern)
}

// checkPaths checks that the repository paths an external command names
// exist: words (and values after "=") whose first element is a top-level
// entry of the repository.
func checkPaths(t *testing.T, c docspec.Command) {
	for _, w := range c.Words[1:] {
		if i := strings.LastIndex(w, "="); i >= 0 {
			w = w[i+1:]
		}
		first, _, ok := strings.Cut(w, "/")
		if !ok || first == "" || first == "." || strings.ContainsAny(w, "<>*$") {
			continue
		}
		if _, err := os.Stat(first); err != nil {
			continue // not a repository path
		}
		if _, err := os.Stat(w); err != nil {
			t.Errorf("%s: %q names %s, which the repository does not have", c.Where(), c.Text, w)
		}
	}
}
