package scenarios

import (
	"math"
	"testing"

	"handoff/models/perf"
)

const capacityDoc = `
name: capacity
model: llama-3.1-8b
slo: {ttft: 500ms, tpot: 50ms}
workload:
  synthetic:
    requests: 10
    arrival: {process: poisson, rate: 1/s}
    input_tokens: {dist: fixed, value: 100}
    output_tokens: {dist: fixed, value: 10}
pools:
  - {name: prefill, role: prefill, count: 1, hardware: h100-sxm, engine: {max_num_batched_tokens: 8192, max_num_seqs: 256}}
  - {name: decode, role: decode, count: 1, hardware: h100-sxm}
`

// capacities builds capacityDoc and returns its prefill and decode
// instances' capacities.
func capacities(t *testing.T) (prefill, decode *poolCapacity) {
	t.Helper()
	_, b, err := parseBuild(t, capacityDoc, "capacity.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := b.Config.Instances
	return newPoolCapacity(in[0].Timer, in[0].Engine), newPoolCapacity(in[1].Timer, in[1].Engine)
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// A 20,000-token prompt prefills in three chunks of the 8,192-token budget,
// each attending to the chunks before it.
func TestCapacityPrefillNsChunks(t *testing.T) {
	p, _ := capacities(t)
	step := p.timer.StepNs
	want := step(&perf.Batch{PrefillSeqs: 1, PrefillTokens: 8192, PrefillTokensSq: 8192 * 8192,
		PrefillAttn: 8192 * 4096.5}) +
		step(&perf.Batch{PrefillSeqs: 1, PrefillTokens: 8192, PrefillTokensSq: 8192 * 8192,
			PrefillAttn: 8192 * (8192 + 4096.5), PrefillCtxRead: 8192}) +
		step(&perf.Batch{PrefillSeqs: 1, PrefillTokens: 3616, PrefillTokensSq: 3616 * 3616,
			PrefillAttn: 3616 * (16384 + 1808.5), PrefillCtxRead: 16384})
	if got := p.PrefillNs(20000); got != want {
		t.Fatalf("PrefillNs(20000) = %d, want %d", got, want)
	}
	if got, want := p.PrefillTokensPerSec(20000, 1e9), 20000/secs(want); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("long prompts: %g tokens/s, want %g (one at a time)", got, want)
	}
}

// Prompts of 2,048 tokens pack four to the 8,192-token budget; the TTFT
// target bounds the packing, each prompt waiting for its whole step.
func TestCapacityPrefillPacking(t *testing.T) {
	p, _ := capacities(t)
	steps := make([]int64, 5)
	for k := 1; k <= 4; k++ {
		steps[k] = p.timer.StepNs(&perf.Batch{PrefillSeqs: k, PrefillTokens: k * 2048,
			PrefillTokensSq: float64(k) * 2048 * 2048, PrefillAttn: float64(k) * 2048 * 1024.5})
	}
	if !(steps[1] < steps[2] && steps[2] < steps[3] && steps[3] < steps[4]) {
		t.Fatalf("step times not rising with the packing: %v", steps[1:])
	}
	for _, tc := range []struct {
		name   string
		ttftNs int64
		k      int
	}{{"loose", 10e9, 4}, {"between 2 and 3", (steps[2] + steps[3]) / 2, 2}, {"below 1", steps[1] / 2, 1}} {
		want := float64(tc.k*2048) / secs(steps[tc.k])
		if got := p.PrefillTokensPerSec(2048, tc.ttftNs); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: %g tokens/s, want %g (%d prompts a step)", tc.name, got, want, tc.k)
		}
	}
}

// Decode throughput is b/step(b) for the largest batch b within the TPOT
// target, max_num_seqs and the KV blocks, at context isl + osl/2.
func TestCapacityDecode(t *testing.T) {
	_, d := capacities(t)
	step := func(b, ctx int) int64 {
		return d.timer.StepNs(&perf.Batch{DecodeSeqs: b, DecodeContext: int64(b * ctx)})
	}
	largest := func(ctx, most int, tpotNs int64) int {
		b := 1
		for n := 1; n <= most; n++ {
			if step(n, ctx) <= tpotNs {
				b = n
			}
		}
		return b
	}
	// 1,000 in, 400 out: context 1,200 = 75 blocks of 16.
	blocks := d.eng.NumBlocks / 75
	for _, tpotNs := range []int64{step(1, 1200) - 1, step(40, 1200), 15e6, 1e9} {
		b := largest(1200, min(d.eng.MaxSeqs, blocks), tpotNs)
		want := float64(b) / secs(step(b, 1200))
		if got := d.DecodeTokensPerSec(1000, 400, tpotNs); math.Abs(got-want) > 1e-9*want {
			t.Errorf("TPOT %d ns: %g tokens/s, want %g (batch %d)", tpotNs, got, want, b)
		}
	}
	// 100,000-token contexts: the KV blocks, not max_num_seqs, bound it.
	ctx := 100000
	most := d.eng.NumBlocks / (ctx / 16)
	if most < 1 || most >= d.eng.MaxSeqs {
		t.Fatalf("the KV bound does not bind: %d requests of %d tokens", most, ctx)
	}
	want := float64(most) / secs(step(most, ctx))
	if got := d.DecodeTokensPerSec(float64(ctx), 0, 10e9); math.Abs(got-want) > 1e-9*want {
		t.Errorf("long contexts: %g tokens/s, want %g (batch %d)", got, want, most)
	}
	if got, want := d.DecodeStepNs(1000, 400, 8), step(8, 1200); got != want {
		t.Errorf("DecodeStepNs = %d, want %d", got, want)
	}
}
