package scenarios

import (
	"math"
	"strings"
	"testing"

	"handoff/models/perf"
	"handoff/results"
	"handoff/sim"
)

// pdPathDoc is one gpt-oss-120b request of 5000 prompt tokens through a
// P/D pair on one H100 node under vLLM 0.11, behind a serving layer, its
// KV moved at NIXL's same-node figure.
const pdPathDoc = `name: pd-path
model: gpt-oss-120b
slo: {ttft: 2s, tpot: 100ms}
workload:
  synthetic:
    requests: 1
    arrival: {process: constant, rate: 1/s}
    input_tokens: {dist: fixed, value: 5000}
    output_tokens: {dist: fixed, value: 3}
catalog:
  links:
    - {name: test-ipc, bandwidth: 4.5GB/s, latency: 2us, source: "test"}
topology: {domain_link: test-ipc}
pools:
  - {name: prefill, role: prefill, hardware: h100-sxm, tp: 2, placement: {domain: node-a}, engine: {vllm: "0.11"}}
  - {name: decode, role: decode, hardware: h100-sxm, tp: 2, placement: {domain: node-a}, engine: {vllm: "0.11"}}
gateway: {latency: 9.4ms, hop: 4.7ms}
`

// TestPDPathPieces: the request's time is every piece of its way, each
// from its source — the serving layer (gateway.latency, and two P/D proxy
// calls of gateway.hop), the prefiller's API server (frontend_latency +
// tokenize_per_token · 5000), its prefill step, its one-token response
// (final_emit), the decoder's API server again, the pull of 5000 · 73,728
// B (vLLM 0.11 turns the hybrid KV cache manager off beside NIXL) over two
// ranks' links of 4.5 GB/s plus the link's latency, the decoder's first
// step and the first token's emission (first_token_emit).
func TestPDPathPieces(t *testing.T) {
	_, b, err := parseBuild(t, pdPathDoc, "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Records[0]
	h100 := b.Config.Instances[0]
	fe := float64(h100.Frontend.LatencyNs) + h100.Frontend.TokenizeNsPerToken*5000
	wantFrontend := 9.4e6 + fe + float64(h100.FinalEmitNs) + 2*4.7e6 + fe + float64(h100.FirstEmitNs)
	wantPull := 2000 + math.Ceil(5000*73728/(2*4.5e9)*1e9)
	wantPrefill := b.Config.Instances[0].Timer.StepNs(&perf.Batch{PrefillSeqs: 1, PrefillTokens: 5000,
		PrefillAttn: 5000 * 5001 / 2})
	for _, c := range []struct {
		name      string
		got, want float64
		tolNs     float64
	}{
		{"front end", float64(r.Time[results.TFrontend]), wantFrontend, 2},
		{"transfer", float64(r.Time[results.TTransfer]), wantPull, 2},
		{"prefill", float64(r.Time[results.TPrefillCompute]), float64(wantPrefill), 0},
	} {
		if math.Abs(c.got-c.want) > c.tolNs {
			t.Errorf("%s %.0f ns, want %.0f", c.name, c.got, c.want)
		}
	}
	var sum int64
	for k := range results.FirstDecodeTime {
		sum += r.Time[k]
	}
	if r.Status != results.Completed || sum != r.FirstTokenNs-r.ArrivalNs || r.Time[results.TDecodeFirst] <= 0 {
		t.Errorf("%v: TTFT %d ns, its pieces %d (%v)", r.Status, r.FirstTokenNs-r.ArrivalNs, sum, r.Time)
	}
	t.Logf("TTFT %.1f ms: front ends and serving layer %.1f, prefill %.1f, pull %.1f, decoder's first step %.1f",
		float64(r.FirstTokenNs-r.ArrivalNs)/1e6, float64(r.Time[results.TFrontend])/1e6,
		float64(r.Time[results.TPrefillCompute]+r.Time[results.TPrefillQueue])/1e6, float64(r.Time[results.TTransfer])/1e6,
		float64(r.Time[results.TDecodeFirst])/1e6)
	// Under vLLM 0.23 the hybrid KV cache manager stays on: the pull moves
	// the full layers' 36,864 B a token and the sliding layers' last blocks.
	doc := strings.ReplaceAll(pdPathDoc, `vllm: "0.11"`, `vllm: "0.23"`)
	_, b23, err := parseBuild(t, doc, "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err = sim.Run(b23.Config)
	if err != nil {
		t.Fatal(err)
	}
	want23 := 2000 + math.Ceil(b23.Model.KVBytesHeld(5000, 16)/(2*4.5e9)*1e9)
	if got := float64(res.Records[0].Time[results.TTransfer]); math.Abs(got-want23) > 2 {
		t.Errorf("vLLM 0.23: transfer %.0f ns, want %.0f", got, want23)
	}
}
