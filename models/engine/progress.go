package engine

// RunningGenerated calls fn with each sequence of the running set and the
// tokens it has generated here in the steps completed so far — current
// even while it cruises, when its Generated is kept relative to the step
// count (cruise.go), and while a step is in flight, whose tokens are not
// yet counted. It changes nothing. Cost: O(running set).
func (in *Instance) RunningGenerated(fn func(s *Seq, generated int)) {
	done := in.stats.Steps
	if in.inStep || in.lostStep {
		done-- // planned, not completed: as settle counts them
	}
	for pos, s := range in.running {
		g := s.Generated
		if in.due[pos] > 0 {
			g += int(done)
		}
		fn(s, g)
	}
}
