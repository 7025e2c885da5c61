package sim

import (
	"strings"
	"testing"

	"handoff/results"
)

// TestFlowControlDropsWhatNothingCanRelease: a swarm case (P/D, llm-d's
// flow control, a decoder that crashes three times) whose crashes strand
// KV on the prefiller, saturating the pool as the gate reads it until the
// run's end: once nothing else is due, the requests the gate still holds
// end dropped, with the reason, instead of never ending (which CI's swarm
// met at this seed). Every other request ends as it did.
func TestFlowControlDropsWhatNothingCanRelease(t *testing.T) {
	cfg := swarmCase(t, 449916184)
	cfg.Records = nil // keep them
	res := mustRun(t, cfg)
	dropped := 0
	for _, r := range res.Records {
		if r.Status == results.Dropped && strings.Contains(r.Reason, "flow control") {
			dropped++
		}
	}
	if dropped == 0 {
		t.Errorf("no request dropped by the flow control's gate: the case no longer strands it (%d records)", len(res.Records))
	}
}
