package sweeprun

import (
	"bytes"

	"handoff/results"
	"handoff/results/sweepdir"
	"handoff/scenarios"
	"handoff/scenarios/sweep"
)

// writePoint writes a point's files, point.json last: its effective
// scenario (paths relative to the point's folder), its summary and what it
// read.
func writePoint(dir string, p sweep.Point, l *scenarios.Loaded, sum results.Summary, inputs []sweepdir.InputFile) error {
	sweepdir.RemoveTemps(dir, p.ID)
	eff, err := l.Effective(sweepdir.PointPath(dir, p.ID))
	if err != nil {
		return err
	}
	var summary bytes.Buffer
	if err := results.WriteJSON(&summary, sum); err != nil {
		return err
	}
	return sweepdir.WritePoint(dir, sweepdir.PointRecord{Point: p, Inputs: inputs}, eff, summary.Bytes())
}
