package main

import (
	"fmt"

	"handoff/results/outdir"
	"handoff/results/plot"
)

// drawPlots re-draws a sweep directory's plots (DIR/plots) from its
// results.csv and point summaries, after a sweep or a merge.
func drawPlots(dir string) error {
	if err := plot.DrawDir(dir, outdir.Saver(dir)); err != nil {
		return fmt.Errorf("results are saved, but the plots failed: %w", err)
	}
	return nil
}
