package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"handoff/results"
	"handoff/scenarios"
	"handoff/scenarios/experiment"
	"handoff/scenarios/experiment/sweeprun"
)

func newValidateCmd(stdout io.Writer) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate SCENARIO",
		Short: "Check a scenario (schema, catalogs, files, its sweep block) without running it",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			l, err := experiment.Load(args[0], sets, 0)
			if err != nil {
				return err
			}
			b, err := l.Build()
			if err != nil {
				return err
			}
			defer b.Close()
			fmt.Fprintf(stdout, "%s: ok (%s, %s, model %s)\n", args[0], instanceCount(b), results.Devices(b.GPUs, b.Device), b.Model.Name)
			for _, line := range b.KVCapacity() {
				fmt.Fprintf(stdout, "  %s\n", line)
			}
			if l.Sweep == nil {
				return nil
			}
			points, err := sweeprun.Points(args[0], sets, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: sweep ok (%d points)\n", args[0], len(points))
			return nil
		},
	}
	scenarioFlags(cmd.Flags(), &sets, nil)
	return cmd
}

// instanceCount says how many instances b has, and of how many
// data-parallel ranks when any has more than one: "34 instances", or
// "3 instances, 34 engines" (each data-parallel rank its own engine).
func instanceCount(b *scenarios.Built) string {
	n, ranks := 0, len(b.Config.Instances)
	for _, in := range b.Config.Instances {
		if in.DPRank == 0 {
			n++
		}
	}
	if n == ranks {
		return results.Count(n, "instance")
	}
	return results.Count(n, "instance") + ", " + results.Count(ranks, "engine")
}
