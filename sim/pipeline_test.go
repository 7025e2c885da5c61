package sim

import (
	"strings"
	"testing"

	"handoff/models/perf"
	"handoff/models/router"
	"handoff/results"
)

// The pipeline tests run one colocated instance of two stages whose step
// time does not depend on the batch: each stage takes ppStageNs, and the
// activations cross the hop between them in ppHopLatencyNs +
// ppHopNsPerToken per token of the micro-batch.
const (
	ppStageNs       = 10_000
	ppHopLatencyNs  = 2_000
	ppHopNsPerToken = 3
)

// pipeConfig is one colocated instance of stages constant-time stages
// with the given token budget.
func pipeConfig(t *testing.T, stages, budget int, reqs []Request) *Config {
	timers := make([]perf.StepTimer, stages)
	for k := range timers {
		timers[k] = perf.StepTimerFunc(func(*perf.Batch) int64 { return ppStageNs })
	}
	hops := make([]perf.Hop, stages-1)
	for k := range hops {
		hops[k] = perf.Hop{LatencyNs: ppHopLatencyNs, NsPerToken: ppHopNsPerToken}
	}
	pipe, err := perf.NewPipeline(timers, hops)
	if err != nil {
		t.Fatal(err)
	}
	ec := engineCfg(t, 1000, budget, 8, false)
	ec.Stages = stages
	insts := instances(RoleColocated, 1, ec, pipe)
	insts[0].Pipeline = pipe
	return &Config{Name: "pipeline", Instances: insts, Router: &router.LeastLoaded{}, Source: &sliceSource{reqs: reqs}}
}

// TestPipelineOneMicroBatchClosedForm: a lone request's micro-batches
// pass through an empty pipeline, each taking both stages and the hop:
// the prompt's 2·10000 + 2000 + 3·100 ns, then 2·10000 + 2000 + 3 per
// token.
func TestPipelineOneMicroBatchClosedForm(t *testing.T) {
	const prompt, out = 100, 5
	res := mustRun(t, pipeConfig(t, 2, 4096, []Request{{ArrivalNs: 1000, PromptTokens: prompt, OutputTokens: out}}))
	r := res.Records[0]
	ttft := int64(2*ppStageNs + ppHopLatencyNs + ppHopNsPerToken*prompt)
	tpot := int64(2*ppStageNs + ppHopLatencyNs + ppHopNsPerToken)
	if r.Status != results.Completed || r.FirstTokenNs-1000 != ttft || r.FinishNs-1000 != ttft+(out-1)*tpot {
		t.Errorf("record %+v: want TTFT %d ns and E2E %d ns", r, ttft, ttft+(out-1)*tpot)
	}
	if busy := res.Instances[0].BusyNs; busy != ttft+(out-1)*tpot {
		t.Errorf("busy %d ns, want %d: one micro-batch at a time is busy end to end", busy, ttft+(out-1)*tpot)
	}
}

// TestPipelineMicroBatchesInFlight: two requests whose prompts each fill
// the token budget go into two micro-batches launched back to back, and
// stay two cohorts: each request still takes a whole pipeline round trip
// per token, but the instance produces twice the tokens of one request
// in the same time — the stages work on both at once. One request alone
// leaves the second stage idle half the time (the bubble).
func TestPipelineMicroBatchesInFlight(t *testing.T) {
	const prompt, out = 64, 40
	one := mustRun(t, pipeConfig(t, 2, prompt, []Request{{ArrivalNs: 0, PromptTokens: prompt, OutputTokens: out}}))
	two := mustRun(t, pipeConfig(t, 2, prompt, []Request{{ArrivalNs: 0, PromptTokens: prompt, OutputTokens: out},
		{ArrivalNs: 0, PromptTokens: prompt, OutputTokens: out}}))
	tpot := int64(2*ppStageNs + ppHopLatencyNs + ppHopNsPerToken)
	for _, r := range two.Records {
		if got := (r.FinishNs - r.FirstTokenNs) / (out - 1); got != tpot {
			t.Errorf("request %d: TPOT %d ns with two micro-batches in flight, want a round trip of %d", r.ID, got, tpot)
		}
	}
	// The second cohort trails the first by one stage: it entered stage 0
	// when the first left it.
	if lag := two.Records[1].FinishNs - two.Records[0].FinishNs; lag != ppStageNs {
		t.Errorf("second request ends %d ns after the first, want one stage, %d", lag, ppStageNs)
	}
	rate1 := float64(out) / float64(one.SimTimeNs)
	rate2 := float64(2*out) / float64(two.SimTimeNs)
	if ratio := rate2 / rate1; ratio < 1.9 || ratio > 2 {
		t.Errorf("tokens per ns: %g with two in flight, %g with one: ratio %.3f, want about 2", rate2, rate1, ratio)
	}
	if s := two.Instances[0].Stats; s.Steps != 2*out {
		t.Errorf("%d micro-batches, want %d: each request's own every round trip", s.Steps, 2*out)
	}
}

// TestPipelineDeterministic: the same seed gives the same records with
// micro-batches in flight.
func TestPipelineDeterministic(t *testing.T) {
	reqs := func() []Request {
		var out []Request
		for i := range 50 {
			out = append(out, Request{ArrivalNs: int64(i) * 7_000, PromptTokens: 40 + 13*(i%7), OutputTokens: 3 + i%11})
		}
		return out
	}
	a := mustRun(t, pipeConfig(t, 3, 128, reqs()))
	b := mustRun(t, pipeConfig(t, 3, 128, reqs()))
	if len(a.Records) != 50 || len(a.Records) != len(b.Records) {
		t.Fatalf("%d and %d records, want 50", len(a.Records), len(b.Records))
	}
	for i := range a.Records {
		if a.Records[i] != b.Records[i] {
			t.Fatalf("record %d differs:\n%+v\n%+v", i, a.Records[i], b.Records[i])
		}
		if a.Records[i].Status != results.Completed {
			t.Errorf("record %d: %+v, want completed", i, a.Records[i])
		}
	}
}

// TestPipelineConfigMustMatch: an instance's pipeline and its engine's
// stages agree, or the run is refused.
func TestPipelineConfigMustMatch(t *testing.T) {
	cfg := pipeConfig(t, 2, 64, []Request{{PromptTokens: 10, OutputTokens: 2}})
	cfg.Instances[0].Engine.Stages = 3
	if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), "Engine.Stages") {
		t.Errorf("3 engine stages over a 2-stage pipeline: %v, want an error", err)
	}
	cfg = pipeConfig(t, 2, 64, []Request{{PromptTokens: 10, OutputTokens: 2}})
	cfg.Instances[0].Pipeline = nil
	if _, err := Run(cfg); err == nil {
		t.Error("2 engine stages without a pipeline: want an error")
	}
}
