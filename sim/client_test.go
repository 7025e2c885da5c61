package sim

import (
	"testing"

	"handoff/results"
)

// With a front end of 7000 ns + 3 ns per prompt token and emissions of
// 500 ns (first) and 900 ns (final), one request alone on an idle
// colocated instance (closedform_test.go's timer) has
// TTFT = 7000 + 3·100 + 2000 (prefill step) + 500 and
// E2E = TTFT + 4 decode steps + 900 − 500.
func TestFrontendAndEmissionClosedForm(t *testing.T) {
	const arrivalNs, prompt, out = 1000, 100, 5
	cfg := colocatedConfig(t, 4096, []Request{{ArrivalNs: arrivalNs, PromptTokens: prompt, OutputTokens: out}})
	cfg.Frontend = Frontend{LatencyNs: 7000, TokenizeNsPerToken: 3}
	cfg.Instances[0].FirstEmitNs, cfg.Instances[0].FinalEmitNs = 500, 900
	r := mustRun(t, cfg).Records[0]
	const ttftNs = 7000 + 3*prompt + 2000 + 500
	const e2eNs = ttftNs + (out-1)*cfDecodeNs + 900 - 500
	if r.Status != results.Completed || r.FirstTokenNs-arrivalNs != ttftNs || r.FinishNs-arrivalNs != e2eNs {
		t.Fatalf("status %v, TTFT %d, E2E %d ns; want completed, %d, %d", r.Status,
			r.FirstTokenNs-arrivalNs, r.FinishNs-arrivalNs, ttftNs, e2eNs)
	}
	if r.Time[results.TFrontend] != 7000+3*prompt+500 || r.Time[results.TEmit] != 400 {
		t.Errorf("frontend %d, emit %d ns; want %d, 400", r.Time[results.TFrontend], r.Time[results.TEmit], 7000+3*prompt+500)
	}
	checkAttribution(t, &r)
}

// runDrained runs cfg with block audits after every event and checks that
// every instance drained.
func runDrained(t *testing.T, cfg *Config) []results.Record {
	t.Helper()
	c, err := drive(t, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkDrained(t, c)
	checkConservation(t, c.recs.all, len(c.recs.all))
	return c.recs.all
}

func TestClientTimeouts(t *testing.T) {
	const arrivalNs = 1000
	// Alone, colocated: engine first token at 2000 ns, end at 2000 + 49·1010.
	tests := []struct {
		name           string
		client         Client
		firstEmitNs    int64
		wantStatus     results.Status
		wantReason     string
		wantFinishNs   int64 // after arrival
		wantFirstToken bool
	}{
		{"total", Client{TimeoutNs: 20_000}, 0, results.Abandoned, "client timeout", 20_000, true},
		{"total not reached", Client{TimeoutNs: 2000 + 49*cfDecodeNs}, 0, results.Completed, "", 2000 + 49*cfDecodeNs, true},
		{"first token", Client{FirstTokenTimeoutNs: 1500}, 0, results.Abandoned, "first-token timeout", 1500, false},
		// The engine samples the first token in time, but the client would
		// see it only at 2500 ns.
		{"first token emitted late", Client{FirstTokenTimeoutNs: 2200}, 500, results.Abandoned, "first-token timeout", 2200, false},
		{"first token in time", Client{FirstTokenTimeoutNs: 2000}, 0, results.Completed, "", 2000 + 49*cfDecodeNs, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := colocatedConfig(t, 4096, []Request{{ArrivalNs: arrivalNs, PromptTokens: 100, OutputTokens: 50}})
			cfg.Client = tc.client
			cfg.Instances[0].FirstEmitNs, cfg.Instances[0].FinalEmitNs = tc.firstEmitNs, tc.firstEmitNs
			r := runDrained(t, cfg)[0]
			if r.Status != tc.wantStatus || r.Reason != tc.wantReason || r.FinishNs-arrivalNs != tc.wantFinishNs ||
				(r.FirstTokenNs != 0) != tc.wantFirstToken {
				t.Errorf("got %v %q at +%d ns (first token at %d); want %v %q at +%d ns (first token %v)",
					r.Status, r.Reason, r.FinishNs-arrivalNs, r.FirstTokenNs, tc.wantStatus, tc.wantReason,
					tc.wantFinishNs, tc.wantFirstToken)
			}
		})
	}
}

// In P/D (closedform_test.go: prefill step 2000 ns, then a transfer of
// 38334 ns), a client that gives up during the prefill step, while the KV
// is held or on the wire, leaves no blocks behind on either instance; the
// record ends at the deadline even when the abort waits for the step or
// the transfer to end.
func TestClientTimeoutPD(t *testing.T) {
	const arrivalNs = 1000
	for _, timeoutNs := range []int64{1, 1500, 2000, 10_000, 40_000} {
		cfg := pdConfig(t, []Request{{ArrivalNs: arrivalNs, PromptTokens: 100, OutputTokens: 50},
			{ArrivalNs: arrivalNs + 1, PromptTokens: 100, OutputTokens: 50}})
		cfg.Client.TimeoutNs = timeoutNs
		for _, r := range runDrained(t, cfg) {
			if r.Status != results.Abandoned || r.FinishNs != r.ArrivalNs+timeoutNs {
				t.Errorf("timeout %d ns: request %d ended %v at +%d ns, want abandoned at +%d",
					timeoutNs, r.ID, r.Status, r.FinishNs-r.ArrivalNs, timeoutNs)
			}
		}
	}
}

// A front end and client timeouts add no events to a run without them:
// the front end one per request, the timeouts none while nothing expires.
func TestClientEvents(t *testing.T) {
	reqs := []Request{{ArrivalNs: 0, PromptTokens: 100, OutputTokens: 5}, {ArrivalNs: 10, PromptTokens: 100, OutputTokens: 5}}
	base := mustRun(t, colocatedConfig(t, 4096, reqs)).Events
	cfg := colocatedConfig(t, 4096, reqs)
	cfg.Frontend.LatencyNs = 1
	if got := mustRun(t, cfg).Events; got != base+int64(len(reqs)) {
		t.Errorf("with a front end: %d events, want %d", got, base+int64(len(reqs)))
	}
	cfg = colocatedConfig(t, 4096, reqs)
	cfg.Client = Client{TimeoutNs: 1 << 40, FirstTokenTimeoutNs: 1 << 40}
	if got := mustRun(t, cfg).Events; got != base {
		t.Errorf("with timeouts that never expire: %d events, want %d", got, base)
	}
}

// A client that gives up before the first token reaches it saw no token,
// however many the engine made: alone, colocated, the engine samples the
// first token at +2000 ns and the client would see it 500 ns later, after
// its first-token deadline at +2200. The request ends abandoned at the
// deadline with no first token and no output tokens, whether the engine
// was still decoding then (output 50: aborted at the end of the step in
// flight, with two tokens made) or had finished (output 1). A total
// timeout after the first token leaves the tokens the client saw by then:
// at +6000, the first four (sampled at +2000, +3010, +4020 and +5030), the
// fifth (+6040) not; and no component of its time is negative (the first
// token's emission, taken off emit at the first token, is not given back
// by an end that has none).
func TestAbandonedOutputIsWhatTheClientSaw(t *testing.T) {
	const arrivalNs = 1000
	tests := []struct {
		name      string
		client    Client
		out       int
		wantOut   int32
		wantFirst bool
	}{
		{"first token on its way, decoding", Client{FirstTokenTimeoutNs: 2200}, 50, 0, false},
		{"first token on its way, finished", Client{FirstTokenTimeoutNs: 2200}, 1, 0, false},
		{"total, after the first token", Client{TimeoutNs: 6000}, 50, 4, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := colocatedConfig(t, 4096, []Request{{ArrivalNs: arrivalNs, PromptTokens: 100, OutputTokens: tc.out}})
			cfg.Client = tc.client
			cfg.Instances[0].FirstEmitNs, cfg.Instances[0].FinalEmitNs = 500, 500
			r := runDrained(t, cfg)[0] // checks the components (checkAttribution)
			if r.Status != results.Abandoned || r.OutputTokens != tc.wantOut || (r.FirstTokenNs != 0) != tc.wantFirst {
				t.Errorf("%v with %d output tokens, first token at %d ns; want abandoned with %d, first token %v",
					r.Status, r.OutputTokens, r.FirstTokenNs, tc.wantOut, tc.wantFirst)
			}
			if r.Time[results.TEmit] < 0 {
				t.Errorf("emit %d ns", r.Time[results.TEmit])
			}
		})
	}
}

// A request the server ends while its first token is still on its way to
// the client ends for the client behind that token, which goes the same
// way: alone on a colocated instance whose first token takes 1 ms to
// reach the client, it makes its first token at +2000 ns and then fails
// over eight times (crashes every 100 ns from +2500): failed, its end no
// earlier than its first token, its components its TTFT and nothing
// after.
func TestServerEndBehindTheFirstToken(t *testing.T) {
	cfg := colocatedConfig(t, 4096, []Request{{ArrivalNs: 1000, PromptTokens: 100, OutputTokens: 50}})
	cfg.Instances[0].FirstEmitNs, cfg.Instances[0].FinalEmitNs = 1_000_000, 1_000_000
	for k := range int64(maxFailovers) {
		cfg.Faults = append(cfg.Faults, Fault{Kind: FaultCrash, AtNs: 3500 + 100*k})
	}
	r := runDrained(t, cfg)[0] // checks the components (checkAttribution)
	if r.Status != results.Failed || r.FirstTokenNs != 1000+2000+1_000_000 || r.FinishNs != r.FirstTokenNs {
		t.Errorf("%v (%s) at %d ns, first token at %d; want failed at its first token, %d ns", r.Status, r.Reason,
			r.FinishNs, r.FirstTokenNs, 1000+2000+1_000_000)
	}
}
