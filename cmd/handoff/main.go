// Command handoff simulates disaggregated LLM serving clusters from scenario
// files. See docs/SCENARIOS.md for the scenario reference.
//
// Each command is a constructor newXCmd (its flags into an options struct)
// and a runX that makes one library call and renders what it returns: the
// pipeline of a run is scenarios/experiment's; sweep and merge call
// scenarios/experiment/sweeprun (the directory format is
// results/sweepdir's); goodput and plan call scenarios/experiment/capacity;
// calibrate calls scenarios/experiment/calibration; every file goes
// through results/outdir. What stays here is rendering: the progress lines
// (progress.go, fed by the libraries' callbacks), the summary lines and
// tables, and the exit statuses (exit.go).
package main

import (
	"fmt"
	"handoff/scenarios/experiment"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes the command line and returns the process exit status
// (exit.go).
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	return execute(root, stderr)
}

// execute runs the command and reports its error as one line on stderr.
// A panic the command did not recover itself (each recovers its runs, to
// name them: see recoverRun) is reported the same way, never as a dead
// process.
func execute(cmd *cobra.Command, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr, "handoff: internal error: %s at %s — a bug of handoff; please report it with the command line\n",
				oneLine(fmt.Sprint(v)), experiment.PanicSite())
			code = exitError
		}
	}()
	err := cmd.Execute()
	if err != nil {
		fmt.Fprintln(stderr, "handoff:", oneLine(err.Error()))
	}
	return exitCode(err)
}

// oneLine joins a multi-line message (cobra's "Did you mean this?") into
// one line, so that every error is one line on stderr.
func oneLine(msg string) string { return experiment.OneLine(msg) }
