// Command handoff simulates disaggregated LLM serving clusters from scenario
// files. See the README for the scenario reference.
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes the command line and returns the process exit status
// (exit.go).
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(stderr, "handoff:", oneLine(err.Error()))
	}
	return exitCode(err)
}

// lineBreaks matches a line break and the blanks around it.
var lineBreaks = regexp.MustCompile(`\s*\n\s*`)

// oneLine joins a multi-line message (cobra's "Did you mean this?") into
// one line, so that every error is one line on stderr.
func oneLine(msg string) string {
	return lineBreaks.ReplaceAllString(strings.TrimSpace(msg), " ")
}
