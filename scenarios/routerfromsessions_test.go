package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/sim"
)

// routerFromSessionsDoc is three colocated instances serving multi-turn
// conversations, so that session affinity, the session scorer and output
// blocks have something to act on; ROUTER is the router block's content.
const routerFromSessionsDoc = `name: s
model: llama-3.1-8b
slo: {ttft: 1s, tpot: 50ms}
workload:
  sessions:
    sessions: 30
    arrival: {process: poisson, rate: 20/s}
    turns: {dist: uniform, min: 2, max: 5}
    input_tokens: {dist: lognormal, mean: 150, stddev: 100, max: 1000}
    output_tokens: {dist: lognormal, mean: 120, stddev: 60, max: 400}
    think_ms: {dist: uniform, min: 100, max: 400}
    system_prompt_tokens: 600
pools:
  - {name: chat, role: colocated, count: 3, hardware: h100-sxm, context_length_range: [0, 8000],
     engine: {max_num_batched_tokens: 4096, max_num_seqs: 64}}
router:
  ROUTER
`

// TestRouterFromSessionsRunAsInline (metamorphic): on conversations, a
// Dynamo flags file setting every flag handoff models and the
// EndpointPickerConfig using every plugin type run byte for byte as their
// inline sections; and the session knobs act: Dynamo's run with session
// affinity and output blocks differs from its run without them.
func TestRouterFromSessionsRunAsInline(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kv.flags"), []byte(dynamoFlagsEvery), 0o644); err != nil {
		t.Fatal(err)
	}
	every, err := filepath.Abs("testdata/epp-every-plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(router string) *sim.Result {
		t.Helper()
		doc := strings.Replace(routerFromSessionsDoc, "ROUTER", router, 1)
		_, b, err := parseBuild(t, doc, filepath.Join(dir, "s.yaml"))
		if err != nil {
			t.Fatalf("%s: %v", router, err)
		}
		res, err := sim.Run(b.Config)
		if err != nil {
			t.Fatalf("%s: %v", router, err)
		}
		return res
	}
	for _, pair := range [][2]string{
		{"from: kv.flags", "policy: dynamo\n  dynamo: " + dynamoFlagsInline},
		{"from: " + every, "policy: llmd\n  llmd: " + eppInline["testdata/epp-every-plugin.yaml"]},
	} {
		if !sameRun(run(pair[0]), run(pair[1])) {
			t.Errorf("%s: the run differs from the inline section's", pair[0])
		}
	}
	plain := run("policy: dynamo")
	bound := run("policy: dynamo\n  dynamo: {session_affinity_ttl: 30s, router_track_output_blocks: true}")
	if sameRun(plain, bound) {
		t.Errorf("session affinity and output blocks change nothing on conversations")
	}
}
