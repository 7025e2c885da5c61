package calibrate

import (
	"fmt"
	"slices"
)

// HeldOutConfig is one measured P/D configuration predicted by a fit that
// did not see it (LeaveOneConfigOut).
type HeldOutConfig struct {
	Config string
	Fit    Fitted     // the fit without the configuration
	Result []PDResult // the configuration's runs simulated at that fit
}

// LeaveOneConfigOut refits p once without each of its P/D configurations
// (a P:D split and placement, over its whole concurrency range) and
// simulates that configuration at the fit: how well the P/D stage's terms
// carry to a deployment they never saw. Each refit starts from p.Start,
// which should hold the whole data's fit (WarmStart), and takes at most
// maxEvals evaluations (0: p.MaxEvals). A problem of one configuration has
// nothing to refit on and returns none.
func LeaveOneConfigOut(p Problem, maxEvals int) ([]HeldOutConfig, error) {
	if len(p.PD) < 2 {
		return nil, nil
	}
	var out []HeldOutConfig
	for i, c := range p.PD {
		q := p
		q.PD = slices.Delete(slices.Clone(p.PD), i, i+1)
		q.WarmStart = true
		if maxEvals > 0 {
			q.MaxEvals = maxEvals
		}
		f, err := Fit(q)
		if err != nil {
			return nil, fmt.Errorf("calibrate: without %s: %w", c.Config, err)
		}
		res, err := RunPD([]PDConfig{c}, Options{Sets: p.Sets, Hardware: &f.Hardware, Others: p.Others,
			Workers: p.Workers, Simulate: p.Simulate})
		if err != nil {
			return nil, err
		}
		out = append(out, HeldOutConfig{Config: c.Config, Fit: f, Result: res})
	}
	return out, nil
}
