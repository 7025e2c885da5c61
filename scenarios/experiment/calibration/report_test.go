package calibration

import (
	"strings"
	"testing"

	"handoff/scenarios/calibrate"
)

// TestWritePD renders one run's comparison and the targets: a TTFT 10%
// high meets its 15% target, a throughput 20% low misses its 10%.
func TestWritePD(t *testing.T) {
	m := calibrate.PDRun{Config: "h100-p1tp2-d1tp2", Concurrency: 4, TTFTMean: 1, TTFTMedian: 1, TTFTP99: 1,
		TPOTMean: 0.01, ITLMean: 0.01, OutputTPS: 500}
	r := calibrate.PDRow{Measured: m, Completed: 20, Total: 20, TTFTMean: 1.1, TTFTMedian: 1, TTFTP99: 1,
		TPOTMean: 0.01, ITLMean: 0.01, OutputTPS: 400, E2EMean: 1.1 + 249*0.01}
	var b strings.Builder
	writePD(&b, []calibrate.PDRow{r})
	out := b.String()
	for _, want := range []string{
		"## Measured P/D runs (gpt-oss-120b",
		"| h100-p1tp2-d1tp2 | 4 | 20/20 | 1.1 / 1 (+10%) |",
		"| TTFT mean | 1 | 10.0% (≤ 15%) | +10.0% | yes |",
		"| output throughput | 1 | 20.0% (≤ 10%) | -20.0% | no |",
		"| E2E mean (derived) | 1 | 2.9% | +2.9% | no target |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
