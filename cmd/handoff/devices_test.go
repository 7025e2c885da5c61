package main

import (
	"strings"
	"testing"
)

// TestDevicesNamedByKind: validate, run, goodput and plan count a fleet's
// devices by their kind when every pool's are of one kind (GPUs, Trainium
// chips) and as devices when the kinds mix (Trainium prefill, wafer
// decode); one is singular.
func TestDevicesNamedByKind(t *testing.T) {
	const mixed = "../../scenarios/trainium-prefill-wafer-decode.yaml"
	allTrainium := []string{"--set", "pools.decode.hardware=trainium2", "--set", "pools.decode.wafer=null", "--set", "pools.decode.tp=4"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", quickstart}, "ok (4 instances, 4 GPUs, model"},
		{[]string{"validate", "../../scenarios/multi-turn.yaml"}, "ok (1 instance, 1 GPU, model"},
		{[]string{"validate", mixed}, "ok (4 instances, 16 devices, model"},
		{append([]string{"validate", mixed}, allTrainium...), "ok (4 instances, 16 Trainium chips, model"},
		{[]string{"run", mixed, "--set", "workload.synthetic.requests=40"}, "seed 1   16 devices\n"},
		{[]string{"run", mixed, "--set", "workload.synthetic.requests=40"}, " per device)\n"},
		{append([]string{"run", mixed, "--set", "workload.synthetic.requests=40"}, allTrainium...), " per Trainium chip)\n"},
		{[]string{"goodput", mixed, "--set", "workload.synthetic.requests=40", "--tolerance", "0.5"}, " req/s per device over 16 devices"},
		{[]string{"plan", mixed, "--target-rate", "4", "--count", "decode=1:2", "--set", "workload.synthetic.requests=40"},
			"$/h     devices  fleet"},
		{[]string{"plan", mixed, "--target-rate", "4", "--count", "decode=1:2", "--set", "workload.synthetic.requests=40"},
			"for 8 devices, attainment 100.0%, request goodput 2.677 req/s (0.3346 per device)"},
	} {
		code, stdout, stderr := runCLI(t, tt.args...)
		if code != 0 || !strings.Contains(stdout, tt.want) || strings.Contains(stdout, "GPUs") != strings.Contains(tt.want, "GPUs") {
			t.Errorf("handoff %s: exit %d, %s\nstdout lacks %q or names GPUs wrongly:\n%s", strings.Join(tt.args, " "), code, stderr, tt.want, stdout)
		}
	}
}
