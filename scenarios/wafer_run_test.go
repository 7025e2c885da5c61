package scenarios

import (
	"math"
	"strings"
	"testing"

	"handoff/models/perf"
	"handoff/results"
	"handoff/sim"
)

// runAllComplete runs b and requires n records, all completed.
func runAllComplete(t *testing.T, b *Built, n int) *sim.Result {
	t.Helper()
	res, err := sim.Run(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != n {
		t.Fatalf("%d records, want %d", len(res.Records), n)
	}
	for _, r := range res.Records {
		if r.Status != results.Completed || r.OutputTokens <= 0 {
			t.Fatalf("request %d: %v (%s)", r.ID, r.Status, r.Reason)
		}
	}
	return res
}

// TestWaferSingleRequestClosedForm: one request, prompt P = 1000, output
// O = 100, alone in the GPU-prefill → wafer-decode cluster. Its life is
//
//	prefill step (H100 TP 4 roofline, 1000 tokens)
//	+ transfer: 5 µs + 1000·327,680 B / (4 × 150 GB/s) = 5 µs + 546,134 ns (the
//	  prefiller's 4 ranks and the 4 wafers each have their own link)
//	+ staging:  327,680,000 B / 100 GB/s = 3,276,800 ns
//	+ O decode steps on the wafer, each ≈ 80·(6.73 + 2.5·8.192) + 3·5 + ~18.8 + 10 µs = 2.2206 ms
//	+ the front end, the last token's emission, and the decode leg (the
//	  prefiller's response, the decoder's front end: sim's relay)
//
// with the prefill and decode steps taken from the built timers (their
// values are hand-checked in models/perf). Tolerance 1 µs: every step and
// the network round to whole nanoseconds, and the decode context is taken
// as P + k at the k-th step (it moves a step by ~0.02 ns per token).
func TestWaferSingleRequestClosedForm(t *testing.T) {
	_, b, err := parseBuild(t, waferBase, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const prompt, out = 1000, 100
	prefillNs := b.Config.Instances[0].Timer.StepNs(&perf.Batch{PrefillSeqs: 1, PrefillTokens: prompt,
		PrefillAttn: prompt * (prompt + 1) / 2})
	transferNs := 5_000 + math.Ceil(prompt*327_680/(4*150e9)*1e9)
	stagingNs := math.Round(prompt * 327_680 / 100e9 * 1e9)
	wafer := b.Config.Instances[1].Timer
	decodeNs := int64(0)
	for k := range out {
		decodeNs += wafer.StepNs(&perf.Batch{DecodeSeqs: 1, DecodeContext: int64(prompt + k)})
	}
	if perToken := float64(decodeNs) / out; math.Abs(perToken-2_220_583) > 100 {
		t.Errorf("wafer decode %.0f ns per token, want ~2,220,583 (450.3 tokens/s)", perToken)
	}
	res := runAllComplete(t, b, 1)
	r := res.Records[0]
	fe, dfe := b.Config.Frontend, b.Config.Instances[1].Frontend
	clientNs := float64(fe.LatencyNs) + fe.TokenizeNsPerToken*prompt + float64(b.Config.Instances[1].FinalEmitNs) +
		float64(b.Config.Instances[0].FinalEmitNs) + float64(dfe.LatencyNs) + dfe.TokenizeNsPerToken*prompt // the decode leg
	want := float64(prefillNs) + transferNs + stagingNs + float64(decodeNs) + clientNs
	t.Logf("end to end %d ns; closed form %.0f = prefill %d + transfer %.0f + staging %.0f + decode %d + front ends and emissions %.0f",
		r.FinishNs-r.ArrivalNs, want, prefillNs, transferNs, stagingNs, decodeNs, clientNs)
	if got := float64(r.FinishNs - r.ArrivalNs); math.Abs(got-want) > 1000 {
		t.Errorf("end to end %.0f ns, want %.0f (prefill %d + transfer %.0f + staging %.0f + %d decode steps %d)",
			got, want, prefillNs, transferNs, stagingNs, out, decodeNs)
	}
	if got := float64(r.Time[results.TTransfer]); math.Abs(got-(transferNs+stagingNs)) > 2 {
		t.Errorf("transfer time %.0f ns, want transfer + staging = %.0f", got, transferNs+stagingNs)
	}
}

// TestWaferPressurePoliciesComplete runs 60 requests of 300 output tokens
// (0.66 s each on the wafer) at 200/s, from two prefillers to one decoder
// of 12 slots, well above what the slots serve at once, under each
// pressure policy: every request completes (reject re-sends refused ones).
// Under recompile, prompts of 1000 or 20,000 tokens: a long one drains the
// decoder of 8k slots and recompiles it to 32k slots.
func TestWaferPressurePoliciesComplete(t *testing.T) {
	for _, tc := range []struct{ name, policy, input string }{
		{"queue", "pressure_policy: queue", ""},
		{"reject", "pressure_policy: reject", ""},
		{"recompile", "pressure_policy: recompile\n      recompile_time: 50ms\n      layouts: [[{count: 3, context: 32768}]]",
			"{dist: empirical, values: [1000, 20000]}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := waferEdit(t, "wafers: 4", "wafers: 4\n      "+tc.policy)
			if tc.input != "" {
				doc = strings.Replace(doc, "{dist: fixed, value: 1000}", tc.input, 1)
			}
			doc = strings.Replace(doc, "requests: 1\n", "requests: 60\n", 1)
			doc = strings.Replace(doc, "rate: 1/s", "rate: 200/s", 1)
			doc = strings.Replace(doc, "{dist: fixed, value: 100}", "{dist: fixed, value: 300}", 1)
			doc = strings.Replace(doc, "    tp: 4\n", "    tp: 4\n    count: 2\n", 1)
			_, b, err := parseBuild(t, doc, "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			res := runAllComplete(t, b, 60)
			var rejections, recompiles int64
			for _, r := range res.Records {
				rejections += int64(r.Rejections)
			}
			for _, in := range res.Instances {
				recompiles += in.Stats.Recompiles
			}
			t.Logf("%s: %d rejections, %d recompiles", tc.name, rejections, recompiles)
			if tc.name == "reject" && rejections == 0 || tc.name == "recompile" && recompiles == 0 {
				t.Errorf("%s policy never acted: %d rejections, %d recompiles", tc.name, rejections, recompiles)
			}
		})
	}
}

// TestColocatedWaferRuns: Llama-3.1-8B colocated on one wafer, prefill on
// the wafer at its prefill efficiency; 16 GB of weights leave 28 GB, room
// for 32 slots of 4096 tokens (32·4096·131,072 B = 17.2 GB).
func TestColocatedWaferRuns(t *testing.T) {
	doc := `name: c
model: llama-3.1-8b
slo: {ttft: 2s, tpot: 50ms}
workload:
  synthetic:
    requests: 30
    arrival: {process: poisson, rate: 100/s}
    input_tokens: {dist: uniform, min: 100, max: 2000}
    output_tokens: {dist: fixed, value: 50}
pools:
  - name: wafer
    hardware: wse-3
    wafer: {slots: [{count: 32, context: 4096}]}
`
	_, b, err := parseBuild(t, doc, "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := b.Config.Instances[0]; d.StagingBps != 0 || d.GPUs != 1 || d.Engine.MaxModelLen != 4096 {
		t.Errorf("colocated wafer: staging %g, devices %d, max_model_len %d", d.StagingBps, d.GPUs, d.Engine.MaxModelLen)
	}
	runAllComplete(t, b, 30)
}
